"""Network plans that both engines build, so that the kernel testbed and ns-3 run the same network.

- :mod:`tcpmodels.topology.addressing`  the addressing and routing plan of P1's k=4 fat-tree, followed by
  :func:`tcpmodels.testbed.topologies.fat_tree` and :func:`tcpmodels.sim.fattree.build_fattree`.

Pure Python, no I/O: in the bottom layers, so that ``testbed`` and ``sim`` (which may not import each other)
share it.
"""
