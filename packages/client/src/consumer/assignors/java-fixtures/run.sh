#!/usr/bin/env bash
# Regenerates fixtures.tsv by running the scenarios through Kafka's own assignor classes.
#   java-fixtures/run.sh <apache/kafka checkout> [count] [seed]
# Needs javac/java 17 and slf4j-api (Debian: libslf4j-java). Compiles only the assignor classes
# and what they use from clients/src/main/java, with two small stand-ins for classes that would
# pull in the rest of the client (common.utils.Utils, requests.JoinGroupRequest).
set -euo pipefail
kafka=$1; count=${2:-600}; seed=${3:-11}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
src=$kafka/clients/src/main/java/org/apache/kafka
for f in common/TopicPartition common/TopicIdPartition common/Uuid common/Node common/PartitionInfo common/Cluster common/ClusterResource \
  common/KafkaException common/Configurable common/utils/CircularIterator common/utils/CollectionUtils \
  clients/consumer/ConsumerPartitionAssignor clients/consumer/ConsumerGroupMetadata clients/consumer/RangeAssignor \
  clients/consumer/RoundRobinAssignor clients/consumer/internals/AbstractPartitionAssignor \
  clients/consumer/internals/AbstractStickyAssignor clients/consumer/internals/Utils; do
  mkdir -p "$work/src/org/apache/kafka/$(dirname $f)"; cp "$src/$f.java" "$work/src/org/apache/kafka/$f.java"
done
mkdir -p "$work/src/org/apache/kafka/common/requests"
cat > "$work/src/org/apache/kafka/common/requests/JoinGroupRequest.java" <<'J'
package org.apache.kafka.common.requests;
public class JoinGroupRequest { public static final int UNKNOWN_GENERATION_ID = -1; public static final String UNKNOWN_MEMBER_ID = ""; }
J
cat > "$work/src/org/apache/kafka/common/utils/Utils.java" <<'J'
package org.apache.kafka.common.utils;
import java.util.*;
public final class Utils {
  public static <T extends Comparable<? super T>> List<T> sorted(Collection<T> c) { List<T> r = new ArrayList<>(c); Collections.sort(r); return Collections.unmodifiableList(r); }
  public static <T> Class<? extends T> loadClass(String k, Class<T> base) throws ClassNotFoundException { return Class.forName(k).asSubclass(base); }
  public static <T> T newInstance(Class<T> c) { try { return c.getDeclaredConstructor().newInstance(); } catch (Exception e) { throw new RuntimeException(e); } }
}
J
cp=/usr/share/java/slf4j-api.jar
javac -nowarn -d "$work/out" -cp $cp -sourcepath "$work/src" $(find "$work/src" -name '*.java') "$here/Harness.java"
node "$here/generate.mjs" "$count" "$seed" > "$work/scenarios.txt"
java -cp "$work/out:$cp" Harness < "$work/scenarios.txt" 2>/dev/null > "$work/results.txt"
paste -d'\t' "$work/scenarios.txt" "$work/results.txt" > "$here/fixtures.tsv"
echo "wrote $(wc -l < "$here/fixtures.tsv") scenarios to $here/fixtures.tsv"
