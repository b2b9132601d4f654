"""Live mode: haslab scenarios on the real kernel TCP of this machine (docs/live.md).

- :mod:`.config`: a validated plan → the testbed's configuration (or a clear rejection);
- :mod:`.testbed`: network namespaces, the HTB + drop-tail bottleneck, the NFQUEUE delay box;
- :mod:`.bpf`: building, registering and unregistering the BPF congestion controls;
- :mod:`.run`: bulk/chunk flows over the testbed, results in the format of ``haslab run``.

Everything needs root; :func:`haslab.live.run.missing_requirements` says what is missing.
"""

from .config import LiveUnsupported, from_plan
from .netns import LiveError

__all__ = ["LiveError", "LiveUnsupported", "from_plan"]
