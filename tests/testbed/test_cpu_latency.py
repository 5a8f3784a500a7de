"""The CPU latency request: held and given back (on the real device with root), errors and warnings without."""

from __future__ import annotations

import struct

import pytest

from tcpmodels.testbed.cpu_latency import CPU_LATENCY_DEVICE, current_cpu_latency_us, hold_cpu_latency


def test_request_is_written_as_a_native_int32_and_read_back(tmp_path):
    device = tmp_path / "cpu_dma_latency"
    device.write_bytes(struct.pack("=i", 2_000_000_000))
    with hold_cpu_latency(25, device=device) as held:
        assert held
        assert current_cpu_latency_us(device) == 25
    assert device.read_bytes() == struct.pack("=i", 25)


def test_missing_device_warns_and_runs_the_block_without_a_request(tmp_path):
    device = tmp_path / "nowhere" / "cpu_dma_latency"
    ran = []
    with pytest.warns(RuntimeWarning, match=r"no CPU latency request held: cannot open .*nowhere"):
        with hold_cpu_latency(device=device) as held:
            ran.append(held)
    assert ran == [False]
    with pytest.raises(OSError, match=r"cannot read the CPU latency target from .*nowhere"):
        current_cpu_latency_us(device)


@pytest.mark.parametrize("bad", [-1, 2**31])
def test_request_out_of_int32_range_is_refused(bad):
    with pytest.raises(ValueError, match=rf"max_latency_us must be between 0 and 2147483647 us; got {bad}"):
        with hold_cpu_latency(bad):
            pass


def test_short_device_read_names_the_device(tmp_path):
    device = tmp_path / "short"
    device.write_bytes(b"\x00\x00")
    with pytest.raises(OSError, match=r"short gave 2 bytes; expected a 32-bit integer"):
        current_cpu_latency_us(device)


@pytest.mark.testbed
@pytest.mark.usefixtures("testbed_available")
def test_real_device_holds_zero_inside_and_gives_it_back():
    before = current_cpu_latency_us()
    with hold_cpu_latency() as held:
        assert held
        assert current_cpu_latency_us() == 0
    assert current_cpu_latency_us() == before, f"{CPU_LATENCY_DEVICE} kept a request after the block"
