"""The snapshot (`doctor.snapshot/1`, `doctor.cluster/1`): the model and its loader (`model`), what differs between two
(`diff`), the bug-report bundle and collect report (`bundle`), and secret redaction for everything written out
(`redact`)."""
