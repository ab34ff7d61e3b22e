"""passk's version: recorded in every manifest and shown by `passk --version`."""

__version__ = "0.1.0"
