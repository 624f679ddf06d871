"""The environment of the Python processes the service and its tools start (the publisher
process, the demo's service, the Kafka tests' service processes): they import the same
``streamnb`` as the process that starts them, from a checkout or an installed package alike,
and see the service's configuration variables only if they are a service themselves."""

from __future__ import annotations

import os
from pathlib import Path

import streamnb
from streamnb.consumers.options import ENV_PREFIX

__all__ = ["STREAMNB_HOME", "child_environment"]

#: the directory the running ``streamnb`` is imported from: a checkout's root, or site-packages
STREAMNB_HOME = Path(streamnb.__file__).resolve().parents[1]


def child_environment(*, service: bool = False, **overrides: str) -> dict[str, str]:
    """This process's environment with :data:`STREAMNB_HOME` first on ``PYTHONPATH``,
    ``PYTHONSAFEPATH`` set, then ``overrides``; without the service's configuration variables
    (``STREAMNB_*``, secrets included) unless the child is a ``streamnb serve`` (``service``),
    which reads its options there as its parent does: the publisher process gets its settings
    through its pipe and needs none of them.

    ``PYTHONSAFEPATH`` keeps a child started as ``python -m …`` from putting its working
    directory first on ``sys.path``: run from a checkout with streamnb installed from it (not
    editable), the checkout's ``streamnb/`` would shadow the installed package, which alone
    holds ``streamnb.consumers`` (the checkout keeps it in ``consumers/``).

    >>> env = child_environment(A="1")
    >>> env["PYTHONPATH"].split(os.pathsep)[0] == str(STREAMNB_HOME), env["PYTHONSAFEPATH"]
    (True, '1')
    """
    path = os.pathsep.join(filter(None, [str(STREAMNB_HOME), os.environ.get("PYTHONPATH")]))
    inherited = {k: v for k, v in os.environ.items() if service or not k.startswith(ENV_PREFIX)}
    return {**inherited, "PYTHONPATH": path, "PYTHONSAFEPATH": "1", **overrides}
