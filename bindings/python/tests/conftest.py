"""Shared fixtures: a CPU context, and device parametrization over the devices that can run here."""
import pytest

import tkc

ALL_DEVICES = ("CPU", "LLVM", "INTERP", "WEBGPU", "CUDA")


def device_params(names=ALL_DEVICES):
    """pytest params for names, the ones that cannot run here skipped with the reason."""
    return [pytest.param(d, marks=pytest.mark.skipif(not tkc.device_available(d), reason="device %s cannot run here" % d), id=d)
            for d in names]


@pytest.fixture(scope="session")
def ctx():
    with tkc.Context("CPU") as c:
        yield c


@pytest.fixture(scope="module", params=device_params())
def dev_ctx(request):
    with tkc.Context(request.param) as c:
        yield c
