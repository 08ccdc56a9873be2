#!/usr/bin/env bash
# Usage: tools/spark-s3a-jars.sh DEST — puts the jars Spark's s3a:// filesystem needs
# (hadoop-aws and the AWS SDK bundle) into DEST, for tests/storage/test_spark.py.
#
# Their home is Maven Central, which CI cannot reach; PyPI can. sagemaker-pyspark's sdist
# ships both (hadoop-aws 3.3.1, AWS SDK v1 1.11.901), so it is downloaded (pinned by hash in
# tools/spark-s3a-jars.txt), never installed (it would pin pyspark 3.3), and only the two
# jars are kept. Written to a temporary folder first: DEST holds both jars or none.
set -euo pipefail
dest=${1:?usage: tools/spark-s3a-jars.sh DEST}
here="$(cd "$(dirname "$0")" && pwd)"
python=${PYTHON:-python3}
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$python" -m pip download -q --no-deps --require-hashes -r "$here/spark-s3a-jars.txt" -d "$work"
tar -xzf "$work"/sagemaker_pyspark-*.tar.gz -C "$work" --wildcards --no-anchored \
  'deps/jars/hadoop-aws-*.jar' 'deps/jars/aws-java-sdk-bundle-*.jar'
mkdir -p "$work/jars"
mv "$work"/sagemaker_pyspark-*/deps/jars/*.jar "$work/jars/"
test "$(ls "$work/jars" | wc -l)" = 2
rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
mv "$work/jars" "$dest"
