"""verl-ascend-doctor: diagnose, provision and smoke-test verl + MindSpeed stacks on Ascend NPUs."""

__version__ = "0.1.0"
