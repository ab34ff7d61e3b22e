"""Stage 2, records: what a run keeps. Result rows and the append-only store a killed run resumes from
(results.py), the manifest that pins what ran (manifest.py)."""
