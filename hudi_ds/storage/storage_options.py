"""Where a table lives and the credentials to reach it: URIs and `storage_options`.

One spelling for every entry point: the Python API's `storage_options`, Spark data source options and
the CLI's environment all use the key names delta-rs, polars and hudi-rs accept (`AWS_ENDPOINT_URL`,
`AWS_ACCESS_KEY_ID`, ...), case-insensitively. Spark users' `spark.hadoop.fs.s3a.*` settings map onto
the same keys. Values are secrets: nothing here puts them in a message or a repr.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from hudi_ds.errors import ConfigError

LOCAL_SCHEMES = ("", "file")
OBJECT_STORE_SCHEMES = {"s3": "s3", "s3a": "s3", "gs": "gs", "az": "az", "abfs": "abfs", "abfss": "abfss"}

# Our key -> the object_store (obstore) config key. Keys of the client (not the store) are in CLIENT_KEYS.
STORE_KEYS: dict[str, str] = {
    "AWS_ENDPOINT_URL": "aws_endpoint",
    "AWS_ENDPOINT": "aws_endpoint",
    "AWS_ACCESS_KEY_ID": "aws_access_key_id",
    "AWS_SECRET_ACCESS_KEY": "aws_secret_access_key",
    "AWS_SESSION_TOKEN": "aws_session_token",
    "AWS_REGION": "aws_region",
    "AWS_DEFAULT_REGION": "aws_region",
    "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "aws_virtual_hosted_style_request",
    "GOOGLE_SERVICE_ACCOUNT": "google_service_account",
    "GOOGLE_SERVICE_ACCOUNT_KEY": "google_service_account_key",
    "GOOGLE_APPLICATION_CREDENTIALS": "google_application_credentials",
    "AZURE_STORAGE_ACCOUNT_NAME": "azure_storage_account_name",
    "AZURE_STORAGE_ACCOUNT_KEY": "azure_storage_account_key",
    "AZURE_STORAGE_SAS_KEY": "azure_storage_sas_key",
    "AZURE_STORAGE_CLIENT_ID": "azure_storage_client_id",
    "AZURE_STORAGE_CLIENT_SECRET": "azure_storage_client_secret",
    "AZURE_STORAGE_TENANT_ID": "azure_storage_tenant_id",
    "AZURE_STORAGE_USE_EMULATOR": "azure_storage_use_emulator",
    "AZURE_STORAGE_ENDPOINT": "azure_storage_endpoint",
}
CLIENT_KEYS: dict[str, str] = {"AWS_ALLOW_HTTP": "allow_http", "AZURE_ALLOW_HTTP": "allow_http",
                               "GOOGLE_ALLOW_HTTP": "allow_http"}
# Declares that one writer at a time writes the table: allows stores without conditional creates.
OUR_KEYS = frozenset({"HUDI_SINGLE_WRITER"})
KNOWN_KEYS = frozenset(STORE_KEYS) | frozenset(CLIENT_KEYS) | OUR_KEYS

# Spark's Hadoop S3A settings (without the `spark.hadoop.` prefix) -> our keys.
S3A_KEYS: dict[str, str] = {
    "fs.s3a.endpoint": "AWS_ENDPOINT_URL",
    "fs.s3a.access.key": "AWS_ACCESS_KEY_ID",
    "fs.s3a.secret.key": "AWS_SECRET_ACCESS_KEY",
    "fs.s3a.session.token": "AWS_SESSION_TOKEN",
    "fs.s3a.endpoint.region": "AWS_REGION",
    "fs.s3a.path.style.access": "AWS_VIRTUAL_HOSTED_STYLE_REQUEST",  # inverted below
    "fs.s3a.connection.ssl.enabled": "AWS_ALLOW_HTTP",  # inverted below
}
_INVERTED = {"fs.s3a.path.style.access", "fs.s3a.connection.ssl.enabled"}


def is_storage_key(key: str) -> bool:
    return key.upper() in KNOWN_KEYS


def normalize_storage_options(options: Mapping[str, object] | None) -> dict[str, str]:
    """Upper-case known keys with string values; an unknown AWS_/GOOGLE_/AZURE_ key is refused by name."""
    out: dict[str, str] = {}
    for key, value in (options or {}).items():
        name = str(key).upper()
        if name not in KNOWN_KEYS:
            raise ConfigError(f"unknown storage option {key!r}; valid keys are {', '.join(sorted(KNOWN_KEYS))}")
        out[name] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


def from_s3a_settings(settings: Mapping[str, str]) -> dict[str, str]:
    """Our storage options from Hadoop S3A settings (keys with or without `spark.hadoop.`)."""
    out: dict[str, str] = {}
    for key, value in settings.items():
        name = key.removeprefix("spark.hadoop.")
        if name not in S3A_KEYS:
            continue
        if name in _INVERTED:
            value = "false" if str(value).strip().lower() == "true" else "true"
        out[S3A_KEYS[name]] = str(value)
    endpoint = out.get("AWS_ENDPOINT_URL")
    if endpoint and "://" not in endpoint:  # S3A takes a bare host and picks the scheme from ssl.enabled
        scheme = "http" if out.get("AWS_ALLOW_HTTP") == "true" else "https"
        out["AWS_ENDPOINT_URL"] = f"{scheme}://{endpoint}"
    return out


@dataclass(frozen=True)
class TableLocation:
    """A table's URI split into the store kind, the bucket (or container) and the prefix inside it."""

    scheme: str  # "" for local paths; s3a is normalized to s3
    uri: str

    @classmethod
    def parse(cls, uri: str) -> TableLocation:
        uri = str(uri)
        scheme = urlsplit(uri).scheme.lower() if "://" in uri else ""
        if scheme in LOCAL_SCHEMES:
            return cls("", uri)
        if scheme not in OBJECT_STORE_SCHEMES:
            raise ConfigError(
                f"unsupported table URI scheme {scheme!r} in {uri!r}; use a local path, file://, s3://, s3a://, "
                "gs://, az://, abfs:// or abfss://")
        normalized = OBJECT_STORE_SCHEMES[scheme]
        rest = uri.split("://", 1)[1].rstrip("/")
        if not rest:
            raise ConfigError(f"table URI {uri!r} names no bucket; write it as {scheme}://bucket/path")
        return cls(normalized, f"{normalized}://{rest}")

    @property
    def is_local(self) -> bool:
        return self.scheme == ""

    def local_path(self) -> str:
        return self.uri[len("file://"):] if self.uri.startswith("file://") else self.uri
