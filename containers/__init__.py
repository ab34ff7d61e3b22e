"""passk's container sources (Dockerfile, supervisor, offline base-image script), shipped as package data."""
