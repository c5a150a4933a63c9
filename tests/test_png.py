"""hmsim.png against an independent PNG reader (Pillow): the same pixels, dpi and text back."""

from __future__ import annotations

import io
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from hmsim.png import SIGNATURE, encode_png


def _read(data: bytes) -> Image.Image:
    im = Image.open(io.BytesIO(data))
    im.load()  # decodes every row: a bad CRC or deflate stream raises here
    return im


@settings(max_examples=40, deadline=None)
@given(
    rows=st.integers(1, 40),
    cols=st.integers(1, 40),
    channels=st.sampled_from([3, 4]),
    seed=st.integers(0, 2**32 - 1),
    dpi=st.sampled_from([72.0, 100.0, 150.0, 300.0]),
    level=st.integers(0, 9),
)
def test_pillow_reads_back_the_pixels_dpi_and_text(rows, cols, channels, seed, dpi, level):
    pixels = np.random.default_rng(seed).integers(0, 256, (rows, cols, channels), dtype=np.uint8)
    data = encode_png(pixels, dpi, {"Software": "hmsim", "Title": "fig 1"}, level)
    assert data.startswith(SIGNATURE)
    im = _read(data)
    assert im.mode == ("RGB" if channels == 3 else "RGBA")
    assert np.array_equal(np.asarray(im), pixels)
    # pHYs holds whole pixels per metre: the dpi comes back to within that rounding.
    assert im.info["dpi"] == pytest.approx((dpi, dpi), abs=0.02)
    assert im.info["Software"] == "hmsim" and im.info["Title"] == "fig 1"


def test_a_strided_view_is_written_as_its_pixels():
    """The RGB of an RGBA drawing is a view with gaps between its pixels."""
    rgba = np.random.default_rng(3).integers(0, 256, (9, 11, 4), dtype=np.uint8)
    im = _read(encode_png(rgba[..., :3], 150.0, {}, 3))
    assert np.array_equal(np.asarray(im), rgba[..., :3])


def test_rows_are_unfiltered():
    """Every row starts with filter type 0: the stream inflates to rows of 1 + width x 3 bytes."""
    pixels = np.full((5, 7, 3), 200, np.uint8)
    data = encode_png(pixels, 100.0, {}, 6)
    start = data.index(b"IDAT") + 4
    length = int.from_bytes(data[start - 8 : start - 4], "big")
    raw = np.frombuffer(zlib.decompress(data[start : start + length]), np.uint8).reshape(5, 1 + 7 * 3)
    assert (raw[:, 0] == 0).all() and (raw[:, 1:] == 200).all()


@pytest.mark.parametrize(
    "bad", [np.zeros((2, 2, 3), np.uint16), np.zeros((2, 2), np.uint8), np.zeros((2, 2, 2), np.uint8)]
)
def test_other_pixel_layouts_are_refused(bad):
    with pytest.raises(ValueError, match="rows x columns x 3 or 4 uint8"):
        encode_png(bad, 100.0, {}, 3)
