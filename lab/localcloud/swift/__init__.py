"""The local cloud's object storage: OpenStack Swift (Debian's packages) on 127.0.0.1, with its S3 API.

One account, one container and one object server (one device: a directory under the state directory, one replica,
no mount check) and Swift's proxy, whose pipeline authenticates Swift requests with Keystone tokens (authtoken,
keystoneauth) and S3 requests with Keystone's EC2 credentials (s3api, s3token). The project user gets an EC2
credential and a bucket for Pulumi's shared state (``STATE=swift``: scripts/env.sh, docs/team-state.md).

- ``config``: swift.conf, the servers' and the proxy's configuration, the rings (system python, standard library)
- ``server``: the four daemons as services of the local cloud, the rings built, the EC2 credential and the bucket,
  and ``state-backend.env`` (what scripts/env.sh reads)
- ``serve``: the entry point each daemon runs (Swift's own ``run_wsgi``, reading swift.conf from the state directory)
"""
