"""Guards shared by the tests."""
import contextlib
import signal


@contextlib.contextmanager
def hang_guard(seconds):
    """Fail the test, rather than hang it, if the block runs longer than ``seconds``
    (SIGALRM: the main thread of a POSIX process)."""
    def alarm(signum, frame):
        raise AssertionError(f"still running after {seconds} s: it hangs")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
