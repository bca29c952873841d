"""The testbed: hosts and the commands run on them over SSH, bottom to top (docs/architecture.md, "Layers").

- :mod:`.runner_remote`, :mod:`.sshrun`, :mod:`.hosts`  one command runner per SSH connection;
  ``Host``, ``connect``
- :mod:`.supervisor`  a long-running process owned on behalf of another (sshd, VM, container)
- :mod:`.placement`  which host of a testbed measures a variant
- (``virtrepro.guests``, ``virtrepro.platforms``: the guests and the platforms' code, this layer too)
- :mod:`.packages`  the Debian packages the code relies on
- :mod:`.hostagent`, :mod:`.agent`  a remote host's side and the controller's side of its guests
- :mod:`.kinds`  the kinds of testbed (local, ssh, slurm) behind one interface
- :mod:`.remote`, :mod:`.availability`  command lines: a remote testbed's set-up, the platform probe

This ``__init__`` imports nothing: the platforms and guests import :mod:`.hosts` without the rest.
"""
