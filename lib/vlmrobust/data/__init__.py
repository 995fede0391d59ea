"""The item table, image references, real-data loaders and saved splits.

* :mod:`.items` — the item schema check (:func:`validate_items`), its digest, atomic table writes;
* :mod:`.images` — :func:`load_image` / :func:`load_depth` for every kind of reference, with read-time guards;
* :mod:`.loaders` — VLMEvalKit TSV, parquet and Hugging Face datasets into the item schema;
* :mod:`.splits` — saved selections (notebook 01's split), read back as the item source ``split:<name>``.
"""

from .images import (
    MAX_IMAGE_BYTES,
    MAX_PIXELS,
    SOURCE_GROUP,
    ImageError,
    b64_image,
    check_image_bytes,
    decode_image,
    load_depth,
    load_image,
)
from .items import ItemTableError, items_digest, save_items, validate_items, write_parquet_atomic
from .loaders import DEFAULT_COLUMNS, items_from_records, load_hf_dataset, load_parquet, load_tsv

__all__ = [
    "ImageError", "ItemTableError", "MAX_PIXELS", "MAX_IMAGE_BYTES", "SOURCE_GROUP", "DEFAULT_COLUMNS",
    "validate_items", "items_digest", "write_parquet_atomic", "load_image", "load_depth", "decode_image",
    "check_image_bytes", "b64_image", "save_items", "load_tsv", "items_from_records", "load_parquet",
    "load_hf_dataset",
]
