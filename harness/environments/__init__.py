"""The environments stage: images built from recipes and keyed by what they hold, between the inputs that
name them and the execution that runs candidates in them. `bases` is what every kind shares (building an
image, the offline Debian bases, an image's Python, the host's cache of resolved wheels); one module per
kind beside it: `library` (a pinned list of Python libraries: BigCodeBench's), `repository` (a repository's
Python and packages: SWE-bench's), and `instances` (a repository instance set up once, its snapshot copied
per candidate)."""
