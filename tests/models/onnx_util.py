# SPDX-License-Identifier: Apache-2.0
"""ONNX building blocks shared by the test-model generators (tests/*/gen_*.py).

Generators in other folders import this module after putting tests/models on
sys.path, as generate.py does for reference.py.
"""
from onnx import helper

MS_DOMAIN = "com.microsoft"


def ep_node(name, inputs, outputs, **attrs):
    """An EPContext node (com.microsoft domain) with the given attributes."""
    return helper.make_node("EPContext", inputs, outputs, name=name, domain=MS_DOMAIN, **attrs)
