"""Files of a job's, written by the supervisor (root) for the user who may read them."""

import errno
import os


NO_SPACE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)   # a write the job's space (or file size limit) refused


class ProgramTooLarge(Exception):
    """The candidate's program (or a file of it) does not fit in the job's space: the candidate's failure."""

    def __init__(self, size, why):
        super().__init__(f"the program ({size} characters) does not fit in the job's space: {why}")
        self.why = why


def _write_file(path, data, uid, mode=0o600):
    """A file of the candidate's (text or bytes); ProgramTooLarge when the job's space cannot hold it."""
    try:
        with open(path, "wb") as f:
            f.write(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
    except OSError as e:
        if e.errno not in NO_SPACE:
            raise
        raise ProgramTooLarge(len(data), os.strerror(e.errno)) from None
    os.chown(path, uid, uid)
    os.chmod(path, mode)


def _private_dir(path, uid):
    os.mkdir(path)
    os.chown(path, uid, uid)
    os.chmod(path, 0o700)
