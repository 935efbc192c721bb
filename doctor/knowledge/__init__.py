"""What the doctor knows, apart from what it probes: version types (`versions`), chip families (`chips`), vendor
pairing tables (`matrix`), the seed rule (`seed`) and the verified stacks (`profiles`, loading `profiles/stacks/*.toml`)."""
