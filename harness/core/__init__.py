"""The foundation every stage stands on: errors, the constants that name files, labels and reasons (the
host side of the container protocol), text made safe, JSON Lines, passk's own paths and version."""
