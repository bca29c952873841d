"""The raw data as the layers above read it: raw logs and their sidecars (:mod:`.rawlog`), the machine
a run names (:mod:`.machines`) and the probes' records (:mod:`.probes`).

Below the planning (which estimates from the logs already there) and above the declarations (a log is
parsed by its benchmark's parser); ``datalayout`` says where each file is.
"""
