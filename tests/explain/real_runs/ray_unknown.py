import os
import sys
import zipfile

import ray

os.environ["RAY_AUTH_MODE"] = "disabled"  # a local test cluster: no token notice in the log
ray.init(num_cpus=1, include_dashboard=False, _temp_dir=sys.argv[1])
@ray.remote
def unpack(path):
    return zipfile.ZipFile(path).namelist()
ray.get(unpack.remote(__file__))
