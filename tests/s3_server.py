"""A real S3 API server for the tests: moto's, on 127.0.0.1, one per test session; and one that checks
credentials (signatures, access keys), in a process of its own since moto's switch for that is process-wide."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from dataclasses import dataclass

import boto3
from moto.server import ThreadedMotoServer

SECRET = "s3cr3t-Value-That-Must-Never-Leak"


@dataclass
class S3Server:
    endpoint: str
    key_id: str = "testing-key"
    secret: str = SECRET

    def options(self) -> dict[str, str]:
        """Storage options in the key names delta-rs, polars and hudi-rs use."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": self.key_id,
                "AWS_SECRET_ACCESS_KEY": self.secret, "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}

    def client(self):  # noqa: ANN201 - boto3's client type
        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=self.key_id,
                            aws_secret_access_key=self.secret, region_name="us-east-1")

    def new_bucket(self) -> str:
        name = f"lake-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name

    def keys(self, bucket: str) -> list[str]:
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket)
        return [o["Key"] for page in pages for o in page.get("Contents", [])]


def start() -> tuple[ThreadedMotoServer, S3Server]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return server, S3Server(f"http://{host}:{port}")


def start_checking_credentials() -> tuple[subprocess.Popen, S3Server]:
    """A moto server in its own process that refuses requests with an unknown access key (InvalidAccessKeyId)
    or a wrong secret (SignatureDoesNotMatch), as S3 does; the handle holds a user's valid key pair."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=5).close()
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise
            time.sleep(0.1)
    iam = boto3.client("iam", endpoint_url=endpoint, aws_access_key_id="setup", aws_secret_access_key="setup",
                       region_name="us-east-1")
    iam.create_user(UserName="writer")
    iam.put_user_policy(UserName="writer", PolicyName="all", PolicyDocument=json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
    key = iam.create_access_key(UserName="writer")["AccessKey"]
    # from now on every request is authenticated (moto's INITIAL_NO_AUTH_ACTION_COUNT, set to 0)
    urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset-auth", data=b"0", method="POST",
                                                  headers={"Content-Type": "text/plain"}), timeout=10).close()
    return proc, S3Server(endpoint, key["AccessKeyId"], key["SecretAccessKey"])
