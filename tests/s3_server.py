"""A real S3 API server for the tests: moto's, on 127.0.0.1, one per test session."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import boto3
from moto.server import ThreadedMotoServer

SECRET = "s3cr3t-Value-That-Must-Never-Leak"


@dataclass
class S3Server:
    endpoint: str

    def options(self) -> dict[str, str]:
        """Storage options in the key names delta-rs, polars and hudi-rs use."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": "testing-key",
                "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}

    def client(self):  # noqa: ANN201 - boto3's client type
        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id="testing-key",
                            aws_secret_access_key=SECRET, region_name="us-east-1")

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
