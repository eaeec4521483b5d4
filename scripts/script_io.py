"""What the Python helpers share about their command line: the usage error that `main` turns
into one line on stderr and exit code 2, and making the folder an output goes into."""
import os


class UsageError(Exception):
    """Reported as one line on stderr with exit code 2."""


def make_out_folder(out):
    """Makes the folder of --out, or says which part of its path is a file, not a folder."""
    parent = os.path.dirname(os.path.abspath(out))
    existing = parent
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise UsageError(f"--out {out}: {existing} is not a folder")
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--out {out}: cannot make its folder: {e}")
    return parent
