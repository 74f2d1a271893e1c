"""The values podsync reasons about: pods, their containers, volumes and security
settings, Secret values, and what a runtime reports of an engine.

Every value is a frozen attrs class: it hashes, compares by value and cannot change, so
one ``Pod`` is shared by the loader, the planner and the runtimes. Nothing here decides
or does anything beyond checking that a value is well formed.

* ``_pod``: ``Pod``, ``Container``, ports, env, probes, hooks, resources, the policies,
  and the observed values (``ObservedContainer``, ``ObservedImage``, ``ObservedVolume``);
* ``_volume``: a pod's volumes and their sources, the files of content volumes
  (``VolumeContent``), the record of what was written (``WrittenVolume``), mounts;
* ``_security``: security contexts, what a create asks (``ContainerSecurity``), and the
  pure rules between them;
* ``_secrets``: ``SecretText`` and ``SecretPart``, keyed digests, sealed records;
* ``_pod_fields``: ``PodFieldText``, an env value read from the pod's labels or
  annotations, hashed by its reference;
* ``_volume_entries``: ``VolumeEntry``, a file, directory or link written into a volume;
* ``_pulls``: ``PullFailure``, a failed image pull remembered for its back-off;
* ``_observation``: ``Observation``, what was seen of an engine and the root directory
  at one moment (``observe`` returns it, ``plan`` takes it whole).

May import: nothing of podsync.
"""
