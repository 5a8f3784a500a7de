"""The window fields of TCP_INFO (snd_wnd, rcv_space, rcv_ssthresh, rwnd_limited) from a live loopback socket."""

from __future__ import annotations

import socket
import threading

from tcpmodels.testbed import traffic


def test_snd_wnd_is_the_peer_window_below_twice_its_so_rcvbuf():
    """A receiver with SO_RCVBUF = 32 KiB (the kernel doubles it) advertises at most 64 KiB; the sender sees it."""
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 * 1024)  # before listen: accepted sockets inherit it
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    go = threading.Event()
    conn_info = {}

    def sink():
        conn, _ = server.accept()
        conn_info["rcvbuf"] = conn.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
        go.wait(5)  # do not read yet: the sender fills the receiver's window
        while conn.recv(65536):
            pass
        conn_info["sample"] = traffic.sample(conn, mptcp=False)[0]
        conn.close()

    t = threading.Thread(target=sink)
    t.start()
    cli = socket.create_connection(("127.0.0.1", port))
    cli.setblocking(False)
    try:
        cli.send(bytes(1_000_000))
    except BlockingIOError:
        pass
    threading.Event().wait(0.2)
    info = traffic.sample(cli, mptcp=False)[0]
    go.set()
    cli.setblocking(True)
    cli.close()
    t.join()
    server.close()
    assert conn_info["rcvbuf"] == 64 * 1024  # Linux doubles SO_RCVBUF
    assert {"snd_wnd_bytes", "rcv_space_bytes", "rcv_ssthresh_bytes", "rwnd_limited_s"} <= set(info)
    # the receiver did not read: the window the sender sees is what is left, at most the doubled buffer
    assert 0 <= info["snd_wnd_bytes"] <= 64 * 1024
    assert info["bytes_acked"] <= 64 * 1024 + 1 + 65536  # acked = buffered by the receiver (plus loopback skb slack)
    assert info["rwnd_limited_s"] > 0.05  # the sender was stalled by the zero window for most of 0.2 s
    assert 0 < conn_info["sample"]["rcv_ssthresh_bytes"] <= 64 * 1024
    assert conn_info["sample"]["rcv_space_bytes"] > 0
