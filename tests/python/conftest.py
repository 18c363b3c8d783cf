# SPDX-License-Identifier: Apache-2.0
"""Fixtures of the Python package tests (tests/python/README.md).

CTest runs them with PYTHONPATH at the built package and these variables:
  EPCTX_TEST_MODELS_DIR  the generated models (tests/models/generate.py)
  EPCTX_RUN              epctx-run, the CLI the outputs are compared with
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _env_path(name):
    value = os.environ.get(name)
    if not value:
        pytest.skip(f"{name} is not set (run through ctest -R python)")
    return value


@pytest.fixture(scope="session")
def models_dir():
    return _env_path("EPCTX_TEST_MODELS_DIR")


@pytest.fixture(scope="session")
def epctx_run():
    return _env_path("EPCTX_RUN")
