"""HFile version 3, the format of the metadata table's base files and of HFile log blocks.

`HFileWriter` / `HFileReader` handle keys and values as bytes; `avro_records` adds Hudi's Avro records on top
(`write_avro_hfile`, `AvroHFileReader`); `bloom` is the bloom filter Hudi's base files carry.
"""

from hudi_ds.hfile.avro_records import AvroHFileReader, write_avro_hfile
from hudi_ds.hfile.block import Compression
from hudi_ds.hfile.bloom import BloomFilter
from hudi_ds.hfile.reader import HFileReader
from hudi_ds.hfile.writer import DEFAULT_BLOCK_SIZE, HFileWriter

__all__ = ["DEFAULT_BLOCK_SIZE", "AvroHFileReader", "BloomFilter", "Compression", "HFileReader", "HFileWriter",
           "write_avro_hfile"]
