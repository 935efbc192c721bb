"""A Ray job whose task runs the job's own module shipped with runtime_env's working_dir (argv[2]): Ray unpacks it
under <temp>/session_*/runtime_resources/working_dir_files/, where the module rejects its input."""

import sys

import ray

ray.init(num_cpus=1, include_dashboard=False, _temp_dir=sys.argv[1], runtime_env={"working_dir": sys.argv[2]})


@ray.remote
def score(text):
    import my_reward  # the job's own module, from the working_dir Ray unpacked

    return my_reward.compute_score(text)


ray.get(score.remote("answer: abc"))
