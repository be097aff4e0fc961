"""Storage options are checked before anything reaches the store client: a malformed value is a ConfigError
naming its key from every entry point (the Python API, the CLI; Spark in tests/spark), never a panic of the Rust
client; an endpoint written as host:port works as in S3A; a store's refusal shows its error code. Against moto's
S3 server (and one that checks credentials), not mocks."""

from __future__ import annotations

import json
import subprocess
import sys

import obstore
import pyarrow as pa
import pytest
from s3_server import SECRET

from hudi_ds import ConfigError, HudiTable, StorageError
from hudi_ds.cli import app as cli_app
from hudi_ds.cli import main as cli_main
from hudi_ds.storage import open_storage
from hudi_ds.storage.object_store import ObjectStorage
from hudi_ds.storage.storage_options import TableLocation, from_s3a_settings, resolve_storage_options

ROWS = pa.table({"id": ["a", "b", "c"], "ts": [1, 1, 1], "v": [1.0, 2.0, 3.0]})


def create(uri: str, storage_options: dict[str, str]) -> HudiTable:
    return HudiTable.create(uri, table_name="t", record_key="id", ordering_field="ts", buckets=2,
                            storage_options=storage_options)


# (store, key, malformed value, words of the message): each of these made the store client panic or fail
# with its own wording
MALFORMED = [
    ("s3", "AWS_ENDPOINT_URL", "::::", "no valid host and port"),
    ("s3", "AWS_ENDPOINT_URL", "http://127.0.0.1:ab", "no valid host and port"),
    ("s3", "AWS_ENDPOINT_URL", "127.0.0.1:99999", "no valid host and port"),
    ("s3", "AWS_ENDPOINT_URL", "", "is empty"),
    ("s3", "AWS_ENDPOINT_URL", "http://a b:9000", "no valid host"),
    ("s3", "AWS_ENDPOINT_URL", "ftp://127.0.0.1:9000", "scheme 'ftp'"),
    ("s3", "AWS_ENDPOINT_URL", "http://127.0.0.1:9000?x=1", "not an endpoint URL"),
    ("s3", "AWS_ENDPOINT_URL", f"http://me:{SECRET}@127.0.0.1:9000", "user info"),
    ("s3", "AWS_ENDPOINT_URL", f"http://me:{SECRET}@127.0.0.1:ab", "no valid host and port"),
    ("s3", "AWS_ENDPOINT", "http://[zz]:9000", "no valid host and port"),
    ("s3", "AWS_REGION", "us\neast-1", "control character"),
    ("s3", "AWS_DEFAULT_REGION", "us east 1", "not a region name"),
    ("s3", "AWS_ACCESS_KEY_ID", "key\n", "control character"),
    ("s3", "AWS_SECRET_ACCESS_KEY", SECRET + "\n", "control character"),
    ("s3", "AWS_SESSION_TOKEN", "token\r\n", "control character"),
    ("s3", "AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "maybe", "not a boolean"),
    ("s3", "AWS_ALLOW_HTTP", "sure", "not a boolean"),
    ("s3", "HUDI_SINGLE_WRITER", "perhaps", "not a boolean"),
    ("az", "AZURE_STORAGE_ENDPOINT", "127.0.0.1:ab", "no valid host and port"),
    ("az", "AZURE_STORAGE_ACCOUNT_KEY", SECRET + "!", "not base64"),
    ("az", "AZURE_STORAGE_USE_EMULATOR", "maybe", "not a boolean"),
    ("gs", "GOOGLE_SERVICE_ACCOUNT_KEY", "{" + SECRET, "not a JSON object"),
]


@pytest.mark.parametrize("store,key,value,words", MALFORMED, ids=[f"{m[1]}={m[2]!r}" for m in MALFORMED])
def test_a_malformed_option_is_a_config_error_naming_it_from_create_and_open(s3, store, key, value, words):
    bucket = s3.new_bucket()
    uri = {"s3": f"s3://{bucket}/t", "az": "az://container/t", "gs": "gs://bucket/t"}[store]
    base = s3.options() if store == "s3" else {"AZURE_STORAGE_ACCOUNT_NAME": "account"} if store == "az" else {}
    bad = {**base, key: value}
    for entry in (lambda: create(uri, bad), lambda: HudiTable(uri, storage_options=bad)):
        with pytest.raises(ConfigError) as err:
            entry()
        message = str(err.value)
        assert f"storage option {key}" in message and words in message, message
        assert SECRET not in message
    assert s3.keys(bucket) == []  # nothing was written


def test_a_malformed_option_in_the_environment_is_named_as_such(s3, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "127.0.0.1:ab")
    options = {k: v for k, v in s3.options().items() if k != "AWS_ENDPOINT_URL"}
    with pytest.raises(ConfigError, match="environment variable AWS_ENDPOINT_URL='127.0.0.1:ab'"):
        HudiTable(f"s3://{s3.new_bucket()}/t", storage_options=options)


def test_an_endpoint_without_scheme_works_as_in_s3a(s3):
    """S3A users write host:port; AWS_ALLOW_HTTP (S3A: connection.ssl.enabled=false) picks http, else https."""
    host_port = s3.endpoint.removeprefix("http://")
    uri = f"s3://{s3.new_bucket()}/t"
    t = create(uri, {**s3.options(), "AWS_ENDPOINT_URL": host_port})
    t.write(ROWS)
    assert HudiTable(uri, storage_options=s3.options()).to_arrow().num_rows == 3
    assert resolve_storage_options("s3", {"AWS_ENDPOINT_URL": "minio:9000"}, {}) == {
        "AWS_ENDPOINT_URL": "https://minio:9000"}
    assert resolve_storage_options("s3", {"AWS_ENDPOINT_URL": "minio:9000", "AWS_ALLOW_HTTP": "YES"}, {}) == {
        "AWS_ENDPOINT_URL": "http://minio:9000", "AWS_ALLOW_HTTP": "true"}


@pytest.mark.parametrize("settings,endpoint", [
    ({"fs.s3a.endpoint": "minio:9000"}, "https://minio:9000"),  # ssl.enabled defaults to true
    ({"fs.s3a.endpoint": " minio:9000 ", "fs.s3a.connection.ssl.enabled": "false"}, "http://minio:9000"),
    ({"fs.s3a.endpoint": "minio:9000", "fs.s3a.connection.ssl.enabled": "true"}, "https://minio:9000"),
    ({"fs.s3a.endpoint": "http://minio:9000"}, "http://minio:9000"),  # a scheme given is kept
])
def test_s3a_settings_pick_the_scheme_as_s3a_does(settings, endpoint):
    got = from_s3a_settings({f"spark.hadoop.{k}": v for k, v in settings.items()})
    assert got["AWS_ENDPOINT_URL"] == endpoint
    assert (got.get("AWS_ALLOW_HTTP") == "true") == endpoint.startswith("http:")


def test_malformed_s3a_settings_are_named_as_spark_settings():
    with pytest.raises(ConfigError, match="Spark setting spark.hadoop.fs.s3a.endpoint='127.0.0.1:ab'"):
        from_s3a_settings({"spark.hadoop.fs.s3a.endpoint": "127.0.0.1:ab"})
    with pytest.raises(ConfigError, match="Spark setting spark.hadoop.fs.s3a.connection.ssl.enabled='maybe'"):
        from_s3a_settings({"spark.hadoop.fs.s3a.connection.ssl.enabled": "maybe"})


def test_a_plain_http_endpoint_without_allow_http_says_to_allow_it(s3):
    options = {k: v for k, v in s3.options().items() if k != "AWS_ALLOW_HTTP"}
    bucket = s3.new_bucket()
    for given in (options, {**options, "AWS_ALLOW_HTTP": "false"}):
        with pytest.raises(ConfigError, match=r"plain http:// endpoint.*set AWS_ALLOW_HTTP=true"):
            create(f"s3://{bucket}/t", given)
    assert s3.keys(bucket) == []


def test_a_store_gets_only_its_own_familys_options(s3, tmp_path):
    """AWS_* variables in the environment do not break a gs:// or az:// table (obstore refuses another store's
    keys), and storage options are checked on local tables too."""
    location = TableLocation.parse("az://container/t")
    storage = ObjectStorage(location, resolve_storage_options("az", {"AZURE_STORAGE_ACCOUNT_NAME": "account"},
                                                              s3.options()))
    assert storage.store is not None
    with pytest.raises(ConfigError, match="AWS_REGION"):
        HudiTable.create(str(tmp_path / "t"), table_name="t", storage_options={"AWS_REGION": "a\nb"})


def test_a_panic_of_the_store_client_becomes_a_storage_error(s3):
    """A value the checks would refuse, forced past them: the client's panic (a BaseException) is a StorageError."""
    uri = f"s3://{s3.new_bucket()}/t"
    storage = ObjectStorage(TableLocation.parse(uri), {**s3.options(), "AWS_ENDPOINT_URL": "http://127.0.0.1:ab"})
    for call in (lambda: storage.read_bytes(".hoodie/hoodie.properties"), lambda: storage.exists("x"),
                 lambda: storage.write_bytes("x", b"1"), lambda: list(storage.walk_files(""))):
        with pytest.raises(StorageError, match="the object store client crashed"):
            call()


def _a_real_panic() -> BaseException:
    store = obstore.store.from_url("s3://bucket/t", config={"aws_endpoint": "http://127.0.0.1:ab",
                                                            "aws_access_key_id": "k", "aws_secret_access_key": "s"})
    try:
        obstore.head(store, "x")
    except BaseException as exc:  # noqa: BLE001 - pyo3's PanicException is what this fetches
        return exc
    raise AssertionError("obstore no longer panics on a port that is not a number")


def test_cli_reports_a_malformed_endpoint_in_one_line(s3, monkeypatch, capfd):
    uri = f"s3://{s3.new_bucket()}/t"
    create(uri, s3.options()).write(ROWS)
    for key, value in s3.options().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3.endpoint.removeprefix("http://"))  # as S3A users write it
    assert cli_main(["info", uri]) == 0
    capfd.readouterr()
    monkeypatch.setenv("AWS_ENDPOINT_URL", "127.0.0.1:ab")
    assert cli_main(["info", uri]) == 1
    out, err = capfd.readouterr()
    assert err.strip().count("\n") == 0 and "environment variable AWS_ENDPOINT_URL" in err, err
    assert "panicked" not in err and "Traceback" not in err
    assert cli_main(["--json", "info", uri]) == 1
    assert json.loads(capfd.readouterr().out)["error"]["type"] == "ConfigError"


def test_cli_turns_any_native_panic_into_one_line(monkeypatch, capfd, tmp_path):
    """A panic of any Rust library under a command (polars, say) is one line too, not a Rust backtrace."""
    panic = _a_real_panic()

    def crash(args):  # noqa: ANN001, ANN202
        raise panic

    monkeypatch.setattr(cli_app, "_table", crash)
    capfd.readouterr()
    assert cli_main(["info", str(tmp_path)]) == 1
    err = capfd.readouterr().err
    assert err.strip().count("\n") == 0 and "a native library crashed" in err, err


def test_the_cli_in_a_process_exits_1_with_one_line_for_a_malformed_endpoint(s3, tmp_path):
    env = {"AWS_ENDPOINT_URL": "127.0.0.1:9000:9000", "AWS_ALLOW_HTTP": "true", "PATH": ""}
    proc = subprocess.run([sys.executable, "-m", "hudi_ds.cli", "info", f"s3://{s3.new_bucket()}/t"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "AWS_ENDPOINT_URL" in proc.stderr, proc.stderr
    assert "panicked" not in proc.stderr


# ---- a store's refusal ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def checking():
    import s3_server

    proc, server = s3_server.start_checking_credentials()
    yield server
    proc.terminate()
    proc.wait(timeout=30)


@pytest.mark.parametrize("credentials,code,remedy", [
    ({"AWS_SECRET_ACCESS_KEY": "a-wrong-secret"}, "SignatureDoesNotMatch", "check AWS_SECRET_ACCESS_KEY"),
    ({"AWS_ACCESS_KEY_ID": "AKIANOTAKEY", "AWS_SECRET_ACCESS_KEY": "a-wrong-secret"}, "InvalidAccessKeyId",
     "check AWS_ACCESS_KEY_ID"),
])
def test_a_refused_request_shows_the_stores_error_code(checking, credentials, code, remedy, capfd, monkeypatch):
    uri = f"s3://{checking.new_bucket()}/t"
    create(uri, checking.options()).write(ROWS)
    wrong = {**checking.options(), **credentials}
    # HEAD (create looks for hoodie.properties), whose answer has no body, and GET (open reads it)
    for what, entry in (("HEAD", lambda: create(uri, wrong)), ("GET", lambda: HudiTable(uri, storage_options=wrong))):
        with pytest.raises(StorageError) as err:
            entry()
        message = str(err.value)
        assert message.startswith(f"{what} {uri}/.hoodie/hoodie.properties failed: the store answered 403 Forbidden, "
                                  f"{code}: "), message
        assert remedy in message and "retried" not in message and "retries" not in message, message
        assert "a-wrong-secret" not in message and "<?xml" not in message
    for key, value in wrong.items():
        monkeypatch.setenv(key, value)
    capfd.readouterr()
    assert cli_main(["info", uri]) == 1
    err_line = capfd.readouterr().err
    assert err_line.strip().count("\n") == 0 and code in err_line and "a-wrong-secret" not in err_line


@pytest.fixture
def proxy(s3):
    from s3_proxy import S3Proxy

    p = S3Proxy(s3.endpoint).start()
    yield p
    p.stop()


def test_a_failure_after_retries_says_how_many(s3, proxy):
    uri = f"s3://{s3.new_bucket()}/t"
    create(uri, s3.options()).write(ROWS)
    proxy.rule = lambda method, path: ("status", 503) if method == "GET" else None
    with pytest.raises(StorageError) as err:
        HudiTable(uri, storage_options={**s3.options(), "AWS_ENDPOINT_URL": proxy.endpoint})
    message = str(err.value)
    assert "failed after 4 retries: the store answered 503 Service Unavailable, InternalError" in message, message
    assert "retry later" in message
    storage = open_storage(uri, {**s3.options(), "AWS_ENDPOINT_URL": "http://127.0.0.1:9"})  # nothing listens
    with pytest.raises(StorageError, match=r"failed after 4 retries: .*Connection refused.*Check the endpoint"):
        storage.read_bytes("x")
