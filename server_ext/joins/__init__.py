"""The wire contracts of server_ext's join operators, which run on the JVM (``server_ext/jvm``).

The client's compiler builds a spec (``spec.py``: regular, semi and anti joins;
``temporal_spec.py``, ``interval_spec.py``, ``multi_spec.py``) and sends it with the tagged
union of the join's inputs to the server's operator plugin (``server_ext.operators`` registers
the specs). ``condition.py`` is the residual condition tree: checked here at plan time, and
evaluated in Python by the lookup join (``server_ext/lookup``). The Python models the JVM
operators are tested against are in ``tests/models``.
"""
