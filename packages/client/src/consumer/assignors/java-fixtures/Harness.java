import java.io.*;
import java.nio.ByteBuffer;
import java.util.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.internals.AbstractStickyAssignor;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.PartitionInfo;

// Line format: assignor|t0=4,t1=3|member/member/...   member = id;instanceId|-;topics,..;owned t0:1 t1:2;subGen;mdGen|-
public class Harness {
  static class StickyH extends AbstractStickyAssignor {
    public String name() { return "sticky"; }
    protected MemberData memberData(Subscription s) {
      ByteBuffer b = s.userData();
      if (b == null || !b.hasRemaining()) return new MemberData(Collections.emptyList(), Optional.empty());
      b = b.duplicate();
      int gen = b.getInt(); int n = b.getInt(); List<TopicPartition> l = new ArrayList<>();
      for (int i = 0; i < n; i++) { byte[] t = new byte[b.getShort()]; b.get(t); l.add(new TopicPartition(new String(t), b.getInt())); }
      return new MemberData(l, gen == Integer.MIN_VALUE ? Optional.empty() : Optional.of(gen));
    }
  }
  static class CoopH extends AbstractStickyAssignor {
    public String name() { return "cooperative-sticky"; }
    protected MemberData memberData(Subscription s) {
      if (s.generationId().isPresent()) return new MemberData(s.ownedPartitions(), s.generationId());
      ByteBuffer b = s.userData();
      Optional<Integer> g;
      if (b == null) g = Optional.empty(); else if (b.remaining() < 4) g = Optional.of(-1); else g = Optional.of(b.duplicate().getInt());
      return new MemberData(s.ownedPartitions(), g, s.rackId());
    }
    @Override public Map<String, List<TopicPartition>> assignPartitions(Map<String, List<PartitionInfo>> ppt, Map<String, Subscription> subs) {
      Map<String, List<TopicPartition>> a = super.assignPartitions(ppt, subs);
      Map<TopicPartition, String> t = super.partitionsTransferringOwnership == null ? compute(subs, a) : super.partitionsTransferringOwnership;
      for (Map.Entry<TopicPartition, String> e : t.entrySet()) a.get(e.getValue()).remove(e.getKey());
      return a;
    }
    private Map<TopicPartition, String> compute(Map<String, Subscription> subs, Map<String, List<TopicPartition>> as) {
      Map<TopicPartition, String> added = new HashMap<>(); Set<TopicPartition> revoked = new HashSet<>();
      for (Map.Entry<String, List<TopicPartition>> e : as.entrySet()) {
        List<TopicPartition> owned = subs.get(e.getKey()).ownedPartitions();
        Set<TopicPartition> os = new HashSet<>(owned);
        for (TopicPartition tp : e.getValue()) if (!os.contains(tp)) added.put(tp, e.getKey());
        Set<TopicPartition> asg = new HashSet<>(e.getValue());
        for (TopicPartition tp : owned) if (!asg.contains(tp)) revoked.add(tp);
      }
      added.keySet().retainAll(revoked); return added;
    }
  }
  static List<TopicPartition> tps(String s) {
    List<TopicPartition> l = new ArrayList<>();
    if (s.isEmpty()) return l;
    for (String x : s.split(" ")) { int i = x.lastIndexOf(':'); l.add(new TopicPartition(x.substring(0, i), Integer.parseInt(x.substring(i + 1)))); }
    return l;
  }
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    String line;
    while ((line = in.readLine()) != null) {
      String[] parts = line.split("\\|", -1);
      ConsumerPartitionAssignor a;
      switch (parts[0]) {
        case "range": a = new RangeAssignor(); break;
        case "roundrobin": a = new RoundRobinAssignor(); break;
        case "sticky": a = new StickyH(); break;
        default: a = new CoopH();
      }
      Map<String, Integer> ppt = new HashMap<>();
      if (!parts[1].isEmpty()) for (String t : parts[1].split(",")) { String[] kv = t.split("="); ppt.put(kv[0], Integer.parseInt(kv[1])); }
      Map<String, Subscription> subs = new HashMap<>();
      List<String> order = new ArrayList<>();
      for (String m : parts[2].split("/")) {
        String[] f = m.split(";", -1);
        List<String> topics = f[2].isEmpty() ? new ArrayList<>() : new ArrayList<>(Arrays.asList(f[2].split(",")));
        List<TopicPartition> owned = tps(f[3]);
        int subGen = Integer.parseInt(f[4]);
        ByteBuffer ud = null;
        if (parts[0].equals("sticky")) {
          if (!f[5].equals("-") || !owned.isEmpty()) {
            ByteArrayOutputStream bo = new ByteArrayOutputStream(); DataOutputStream d = new DataOutputStream(bo);
            d.writeInt(f[5].equals("-") ? Integer.MIN_VALUE : Integer.parseInt(f[5])); d.writeInt(owned.size());
            // in the order StickyAssignor's user data lists them: grouped by topic in HashMap order
            List<TopicPartition> grouped = new ArrayList<>();
            for (Map.Entry<String, List<Integer>> e : org.apache.kafka.common.utils.CollectionUtils.groupPartitionsByTopic(owned).entrySet())
              for (Integer p : e.getValue()) grouped.add(new TopicPartition(e.getKey(), p));
            for (TopicPartition tp : grouped) { byte[] t = tp.topic().getBytes(); d.writeShort(t.length); d.write(t); d.writeInt(tp.partition()); }
            ud = ByteBuffer.wrap(bo.toByteArray());
          }
          owned = new ArrayList<>();
        } else if (!f[5].equals("-")) { ud = ByteBuffer.allocate(4).putInt(0, Integer.parseInt(f[5])); }
        Subscription s = new Subscription(topics, ud, owned, subGen, Optional.empty());
        s.setGroupInstanceId(f[1].equals("-") ? Optional.empty() : Optional.of(f[1]));
        subs.put(f[0], s); order.add(f[0]);
      }
      Map<String, Integer> known = new HashMap<>();
      for (Subscription s : subs.values()) for (String t : s.topics()) if (ppt.containsKey(t) && ppt.get(t) > 0) known.put(t, ppt.get(t));
      StringBuilder out = new StringBuilder();
      try {
        Map<String, List<TopicPartition>> r;
        if (a instanceof RangeAssignor) r = ((RangeAssignor) a).assign(known, subs);
        else if (a instanceof RoundRobinAssignor) r = ((RoundRobinAssignor) a).assign(known, subs);
        else r = ((AbstractStickyAssignor) a).assign(known, subs);
        for (String id : order) {
          if (out.length() > 0) out.append('/');
          out.append(id).append('=');
          List<TopicPartition> l = r.get(id); StringBuilder sb = new StringBuilder();
          if (l != null) for (TopicPartition tp : l) { if (sb.length() > 0) sb.append(' '); sb.append(tp.topic()).append(':').append(tp.partition()); }
          out.append(sb);
        }
      } catch (Exception e) { out.append("ERROR ").append(e.getClass().getSimpleName()); }
      System.out.println(out);
    }
  }
}
