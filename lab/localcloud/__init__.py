"""localcloud: a real OpenStack control plane (Keystone, Neutron, Octavia, Designate) on 127.0.0.1.

Control commands live in ``lab/localcloud/up``, ``down``, ``status``, ``reset`` and ``fault``; tests use
:mod:`localcloud.testing` and :mod:`localcloud.faults`. The orchestration modules run on the
system python (``/usr/bin/python3``) next to the Debian packages; ``faults``, ``settings`` and
``testing`` use only the standard library (plus openstacksdk in tests) so the project venv can
import them.
"""
