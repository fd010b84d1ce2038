"""Proof of equivalence: a TF1 model function against its migration (``models``), and a
whole TF1 program against its migration (``programs``), each run in a process of its own."""
from migrate.verify.models import VerifyError, failure_of, parse_input, python_c, run_side, verify
from migrate.verify.program import verify_program

__all__ = ["VerifyError", "failure_of", "parse_input", "python_c", "run_side", "verify",
           "verify_program"]
