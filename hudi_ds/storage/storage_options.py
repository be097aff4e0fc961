"""Where a table lives and the credentials to reach it: URIs and `storage_options`.

One spelling for every entry point: the Python API's `storage_options`, Spark data source options and
the CLI's environment all use the key names delta-rs, polars and hudi-rs accept (`AWS_ENDPOINT_URL`,
`AWS_ACCESS_KEY_ID`, ...), case-insensitively. Spark users' `spark.hadoop.fs.s3a.*` settings map onto
the same keys. Every value is checked here, before the store client sees it: the client panics on some
malformed values (an endpoint without a scheme, a line break in a header), so a bad value must be a
`ConfigError` naming its key first. Values are secrets: nothing here puts them in a message or a repr.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
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


# The keys each store reads: a store is built with its own family's keys only (obstore refuses another's).
FAMILY_PREFIX = {"s3": "AWS_", "gs": "GOOGLE_", "az": "AZURE_", "abfs": "AZURE_", "abfss": "AZURE_"}
# Endpoint keys and the key that allows plain HTTP to them.
ENDPOINT_KEYS = {"AWS_ENDPOINT_URL": "AWS_ALLOW_HTTP", "AWS_ENDPOINT": "AWS_ALLOW_HTTP",
                 "AZURE_STORAGE_ENDPOINT": "AZURE_ALLOW_HTTP"}
REGION_KEYS = frozenset({"AWS_REGION", "AWS_DEFAULT_REGION"})
BOOLEAN_KEYS = frozenset({"AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "AZURE_STORAGE_USE_EMULATOR", *CLIENT_KEYS, *OUR_KEYS})
# Values that are no secret and may be shown in a message; every other value is never shown.
SHOWN_KEYS = frozenset({*ENDPOINT_KEYS, *REGION_KEYS, *BOOLEAN_KEYS})
# The spellings object_store reads as booleans, case-insensitively.
TRUE_WORDS, FALSE_WORDS = ("true", "1", "yes", "y", "on"), ("false", "0", "no", "n", "off")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_REGION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_HOST_LABEL = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?$")
_BUCKET = re.compile(r"^[A-Za-z0-9._-]+$")


def is_storage_key(key: str) -> bool:
    return key.upper() in KNOWN_KEYS


def serves(scheme: str, key: str) -> bool:
    """Whether the store of `scheme` ("s3", "gs", "az", ...) reads the storage option `key`."""
    return key in OUR_KEYS or key.startswith(FAMILY_PREFIX.get(scheme, "-"))


def normalize_storage_options(options: Mapping[str, object] | None) -> dict[str, str]:
    """Upper-case known keys with string values; an unknown AWS_/GOOGLE_/AZURE_ key is refused by name."""
    out: dict[str, str] = {}
    for key, value in (options or {}).items():
        name = str(key).upper()
        if name not in KNOWN_KEYS:
            raise ConfigError(f"unknown storage option {key!r}; valid keys are {', '.join(sorted(KNOWN_KEYS))}")
        out[name] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


def resolve_storage_options(scheme: str, given: Mapping[str, str], environment: Mapping[str, str]) -> dict[str, str]:
    """The options the store of `scheme` is built with: `given` (normalized) over the environment's variables
    of the keys that store reads, every value checked (`check_storage_options`)."""
    used = {k: v for k, v in environment.items() if k in KNOWN_KEYS and serves(scheme, k)}
    names = {k: f"environment variable {k}" for k in used} | {k: f"storage option {k}" for k in given}
    return check_storage_options({**used, **given}, names)


def check_storage_options(options: Mapping[str, str], names: Mapping[str, str] | None = None) -> dict[str, str]:
    """`options` with every value checked and normalized: booleans as true/false, an endpoint written as
    host[:port] completed with https:// (http:// when plain HTTP is allowed, as S3A picks the scheme of a bare
    endpoint). A malformed value is a ConfigError naming its key as the user wrote it (`names`: key -> that
    spelling, by default "storage option KEY")."""

    def name(key: str) -> str:
        return (names or {}).get(key, f"storage option {key}")

    out = {key: _checked(key, value, name(key)) for key, value in options.items()}
    for key, allow in ENDPOINT_KEYS.items():
        if key in out:
            plain_ok = out.get(allow) == "true" or (
                key == "AZURE_STORAGE_ENDPOINT" and out.get("AZURE_STORAGE_USE_EMULATOR") == "true")
            out[key] = _endpoint(out[key], plain_ok, name(key), allow)
    return out


def _checked(key: str, value: str, name: str) -> str:
    shown = f"{name}={value!r}" if key in SHOWN_KEYS and "@" not in value else name
    if key in BOOLEAN_KEYS:
        return boolean(value, name)
    if key == "GOOGLE_SERVICE_ACCOUNT_KEY":  # a JSON document: the one value that may span lines
        try:
            if isinstance(json.loads(value), dict):
                return value
        except ValueError:
            pass
        raise ConfigError(f"{name} is not a JSON object; give the service account key file's content as it is")
    if _CONTROL.search(value):
        raise ConfigError(f"{shown} holds a control character (a line break?), which the store client cannot "
                          "send; remove it (a value read from a file keeps its trailing newline)")
    if key in REGION_KEYS:
        value = value.strip()
        if not _REGION.match(value):
            raise ConfigError(f"{name}={value!r} is not a region name (letters, digits, '-', '.', '_'), "
                              "e.g. us-east-1")
    if key == "AZURE_STORAGE_ACCOUNT_KEY":
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise ConfigError(f"{name} is not base64; give the storage account's access key as Azure shows "
                              "it") from None
    return value


def boolean(value: str, name: str) -> str:
    """'true' or 'false' for the spellings object_store reads as booleans; else a ConfigError naming `name`."""
    word = value.strip().lower()
    if word in TRUE_WORDS:
        return "true"
    if word in FALSE_WORDS:
        return "false"
    raise ConfigError(f"{name}={value!r} is not a boolean; use true or false")


def _endpoint(written: str, plain_ok: bool, name: str, allow: str) -> str:
    """An endpoint as scheme://host[:port][/path]; a bare host[:port] gets https://, or http:// when allowed."""
    form = "write it as http(s)://host[:port] or host:port"
    value = written.strip()
    if not value:
        raise ConfigError(f"{name} is empty; {form}, or leave it out to use the store's own endpoint")
    if "://" not in value:
        value = f"{'http' if plain_ok else 'https'}://{value}"
    bad = name if "@" in written else f"{name}={written!r}"  # what precedes '@' may be a password
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        raise ConfigError(f"{bad} has no valid host and port (a port is a number from 1 to 65535); {form}") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise ConfigError(f"{bad} has the scheme {parts.scheme!r}; {form}")
    if "@" in parts.netloc:
        raise ConfigError(f"{name} holds user info (user:password@); give the credentials as their own storage "
                          "options")
    host = parts.hostname or ""
    ipv6 = parts.netloc.startswith("[")  # urlsplit checked the address between the brackets
    if not host or not (ipv6 or all(_HOST_LABEL.match(label) for label in host.rstrip(".").split("."))):
        raise ConfigError(f"{bad} names no valid host; {form}")
    if port == 0 or parts.query or parts.fragment or " " in value:
        raise ConfigError(f"{bad} is not an endpoint URL (port 0, a query, a fragment or a space); {form}")
    if parts.scheme.lower() == "http" and not plain_ok:
        raise ConfigError(f"{bad} is a plain http:// endpoint, which the store client refuses unless it is "
                          f"allowed: set {allow}=true (or use https://)")
    return value


def from_s3a_settings(settings: Mapping[str, str]) -> dict[str, str]:
    """Our storage options from Hadoop S3A settings (keys with or without `spark.hadoop.`), checked and named
    as the user wrote them. As S3A does, an endpoint with a scheme keeps it, and fs.s3a.connection.ssl.enabled
    (default true) picks the scheme of a bare host."""
    out: dict[str, str] = {}
    names: dict[str, str] = {}
    for key, value in settings.items():
        setting = key.removeprefix("spark.hadoop.")
        if setting not in S3A_KEYS:
            continue
        name = f"Spark setting spark.hadoop.{setting}"
        value = str(value).strip()  # S3A reads its settings trimmed
        if setting in _INVERTED:
            value = "false" if boolean(value, name) == "true" else "true"
        out[S3A_KEYS[setting]], names[S3A_KEYS[setting]] = value, name
    if out.get("AWS_ENDPOINT_URL", "").lower().startswith("http://"):
        out["AWS_ALLOW_HTTP"] = "true"
    return check_storage_options(out, names)


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
        bucket = rest.split("/", 1)[0]
        if normalized in ("s3", "gs", "az") and not _BUCKET.match(bucket):
            raise ConfigError(f"table URI {uri!r}: {bucket!r} is not a bucket name (letters, digits, '.', '-', "
                              f"'_'); write it as {scheme}://bucket/path")
        return cls(normalized, f"{normalized}://{rest}")

    @property
    def is_local(self) -> bool:
        return self.scheme == ""

    def local_path(self) -> str:
        return self.uri[len("file://"):] if self.uri.startswith("file://") else self.uri
