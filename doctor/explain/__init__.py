"""`doctor explain`: failure logs matched against the signature database (`profiles/signatures.toml`)."""
