"""passk inside other frameworks, through their own plug-in points (inspect_ai's sandbox providers)."""
