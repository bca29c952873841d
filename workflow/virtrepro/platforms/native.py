"""native: the testbed host itself, no virtualization layer."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from ..testbed import Host
from .base import Platform


class Native(Platform):
    name = "native"
    family = "native"

    @contextmanager
    def instance(self, index: int = 0) -> Iterator[Host]:
        yield self.host
