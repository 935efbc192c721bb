"""A Ray instance that stays up until told to stop: started first, it holds Ray's fixed host ports while a second
instance starts beside it (argv: temp dir, ready file to write, release file to wait for)."""
import sys
import time
from pathlib import Path

import ray

ray.init(num_cpus=1, include_dashboard=False, _temp_dir=sys.argv[1])
Path(sys.argv[2]).write_text("up")
deadline = time.time() + 240
while not Path(sys.argv[3]).exists() and time.time() < deadline:
    time.sleep(0.2)
ray.shutdown()
