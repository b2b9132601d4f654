// The haslab crosscheck's ns-3 side: one dumbbell run, described on the command line the way a
// haslab scenario describes it, printing ONE JSON line of results on stdout.
//
// Built against the ns-3 3.37 libraries (Debian's libns3-dev) by `make ns3-programs`;
// run by python/haslab/crosscheck.py. Every TCP setting that differs between ns-3 3.37's
// defaults and haslab's is set here explicitly from the command line (the Python side passes
// the same values it writes into the haslab scenario); the file each default comes from is
// named next to the setting. docs/fidelity.md lists them.
//
// Topology: left{i} --access-- r1 ==bottleneck== r2 --access-- right{i}, i < pairs. Flow i
// sends from left{i} to right{i}. Every point-to-point direction has a drop-tail device
// queue in packets and no queue disc (flow control disabled, see below), so that the only queue
// is the device's DropTailQueue, as in haslab (one drop-tail FIFO per link direction; the packet
// being serialised is outside the queue in both: PointToPointNetDevice::Send dequeues it before
// TransmitStart).
//
// Measurements (all from trace sources, nothing from logs):
//  - goodput: PacketSink "Rx" bytes (in-order data delivered to the receiving application), over
//    [established, end) and over [end/2, end), as haslab's FlowSummary.goodput_bps and its
//    goodput trace;
//  - retransmissions: the socket's "Tx" trace, a data segment whose sequence number is below the
//    highest sequence number sent so far (as tcp-socket-base.cc's m_highTxMark);
//  - RTOs: TcpSocketBase::ReTxTimeout doubles m_rto (tcp-socket-base.cc, "RFC 6298, clause 2.5,
//    double the timer") and the "RTO" TracedValue reports the change: a change to exactly twice
//    the previous value (or to the 60 s cap) is counted as one RTO; CA_LOSS entries of the
//    "CongState" trace are reported too (loss episodes);
//  - bottleneck drops: the r1->r2 device queue's "Drop" trace;
//  - queue delay: the same queue's "Enqueue" → "Dequeue" time per packet, averaged over the
//    packets dequeued (haslab's LinkDirSummary.sojourn_mean_ns: enqueue → start of transmission).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

using namespace ns3;

namespace
{

struct FlowSpec
{
    std::string kind; // "bulk" or "chunks"
    std::string cc;   // ns-3 TypeId name without "ns3::", or "TcpWestwoodPlus"
    uint64_t startNs{0};
    uint64_t chunkBytes{0};
    uint64_t intervalNs{0};
};

struct FlowStats
{
    uint64_t bytesReceived{0};
    uint64_t bytesReceivedLastHalf{0};
    int64_t establishedNs{-1};
    uint64_t segmentsSent{0};
    uint64_t retransmittedSegments{0};
    uint64_t rtoCount{0};
    uint64_t lossEpisodes{0};
    uint64_t recoveryEpisodes{0};
    uint64_t queueDropped{0};
    bool highSet{false};
    SequenceNumber32 highEnd{0};
};

std::vector<FlowStats> g_flows;
uint64_t g_durationNs = 0;
// --trace=PATH: one CSV line per sender event (time_ns,flow,event,value): cwnd and ssthresh in
// bytes, congestion state, each data segment sent (its sequence number, "tx" or "retx"), RTOs,
// and each of the flow's segments the bottleneck queue dropped ("drop", its sequence number);
// "rto_timer" lines give each new deadline of the retransmission timer (its value: the time left,
// ns), which no trace source of TcpSocketBase exposes (see TimerTracingSocket).
std::FILE* g_trace = nullptr;

void
TraceLine(size_t i, const char* event, int64_t value)
{
    if (g_trace)
    {
        std::fprintf(g_trace,
                     "%lld,%zu,%s,%lld\n",
                     static_cast<long long>(Simulator::Now().GetNanoSeconds()),
                     i,
                     event,
                     static_cast<long long>(value));
    }
}

void
OnCwnd(size_t i, uint32_t, uint32_t v)
{
    TraceLine(i, "cwnd", v);
}

void
OnSsthresh(size_t i, uint32_t, uint32_t v)
{
    TraceLine(i, "ssthresh", v);
}

// The highest cumulative ACK received (TcpSocketBase "HighestRxAck"): one "ack" line per ACK that
// advances it, so a trace shows when the retransmission timer was last restarted (NewAck).
void
OnHighestRxAck(size_t i, SequenceNumber32, SequenceNumber32 v)
{
    TraceLine(i, "ack", v.GetValue());
}

// Each RTT sample (TcpSocketBase "RTT", ns): with "rto" lines, what the timer was set from.
void
OnRtt(size_t i, Time, Time v)
{
    TraceLine(i, "rtt", v.GetNanoSeconds());
}

struct QueueStats
{
    uint64_t enqueued{0};
    uint64_t dequeued{0};
    uint64_t dropped{0};
    long double sojournSumNs{0};
    // Keyed by the Packet object: uids are shared by the fragments TCP cuts from one write.
    std::unordered_map<const Packet*, int64_t> enqueueTime;
} g_bottleneck;

void
OnSinkRx(size_t i, Ptr<const Packet> p, const Address&)
{
    uint64_t now = Simulator::Now().GetNanoSeconds();
    g_flows[i].bytesReceived += p->GetSize();
    if (now >= g_durationNs / 2)
    {
        g_flows[i].bytesReceivedLastHalf += p->GetSize();
    }
}

void
OnTx(size_t i, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() == 0)
    {
        return; // SYN, pure ACK, FIN
    }
    FlowStats& f = g_flows[i];
    f.segmentsSent++;
    SequenceNumber32 end = h.GetSequenceNumber() + p->GetSize();
    bool retx = f.highSet && h.GetSequenceNumber() < f.highEnd;
    if (retx)
    {
        f.retransmittedSegments++;
    }
    TraceLine(i, retx ? "retx" : "tx", h.GetSequenceNumber().GetValue());
    if (!f.highSet || end > f.highEnd)
    {
        f.highEnd = end;
        f.highSet = true;
    }
}

void
OnRto(size_t i, Time oldValue, Time newValue)
{
    // ReTxTimeout: m_rto = Min(m_rto + m_rto, 60 s). An estimate update (RTT sample) gives
    // exactly twice the previous value only by coincidence of nanoseconds.
    if (g_flows[i].establishedNs >= 0 &&
        (newValue == oldValue + oldValue ||
         (newValue == Seconds(60) && oldValue >= Seconds(30) && newValue > oldValue)))
    {
        g_flows[i].rtoCount++;
        TraceLine(i, "rto", newValue.GetNanoSeconds());
    }
}

void
OnCongState(size_t i, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t s)
{
    TraceLine(i, "state", s);
    if (s == TcpSocketState::CA_LOSS)
    {
        g_flows[i].lossEpisodes++;
    }
    else if (s == TcpSocketState::CA_RECOVERY)
    {
        g_flows[i].recoveryEpisodes++;
    }
}

void
OnEnqueue(Ptr<const Packet> p)
{
    g_bottleneck.enqueued++;
    g_bottleneck.enqueueTime[PeekPointer(p)] = Simulator::Now().GetNanoSeconds();
}

void
OnDequeue(Ptr<const Packet> p)
{
    auto it = g_bottleneck.enqueueTime.find(PeekPointer(p));
    if (it == g_bottleneck.enqueueTime.end())
    {
        return;
    }
    g_bottleneck.dequeued++;
    g_bottleneck.sojournSumNs += Simulator::Now().GetNanoSeconds() - it->second;
    g_bottleneck.enqueueTime.erase(it);
}

// A packet the bottleneck queue dropped: counted for the link, and for its flow (haslab's
// FlowSummary.queue_dropped_packets). The device queue holds packets with their PPP header; the
// flow is the sender's address 10.1.<flow>.1, and a --trace "drop" line carries the segment's
// sequence number.
void
OnDrop(Ptr<const Packet> p)
{
    g_bottleneck.dropped++;
    g_bottleneck.enqueueTime.erase(PeekPointer(p));
    Ptr<Packet> c = p->Copy();
    PppHeader ppp;
    Ipv4Header ip;
    TcpHeader tcp;
    if (c->RemoveHeader(ppp) == 0 || c->RemoveHeader(ip) == 0 || c->PeekHeader(tcp) == 0)
    {
        return;
    }
    uint32_t src = ip.GetSource().Get();
    size_t i = (src >> 8) & 0xff;
    if (((src >> 24) & 0xff) == 10 && ((src >> 16) & 0xff) == 1 && i < g_flows.size())
    {
        g_flows[i].queueDropped++;
        TraceLine(i, "drop", tcp.GetSequenceNumber().GetValue());
    }
}

// With --trace, a sender's socket: TcpSocketBase itself, plus an "rto_timer" line whenever its
// retransmission timer (m_retxEvent) gets a new deadline, looked at after each ACK
// (ReceivedAck), each data segment sent (SendDataPacket) and each timeout (ReTxTimeout): the
// restarts of NewAck, SendDataPacket's "schedule when none is pending" and the cancellations.
// Built as TcpL4Protocol::CreateSocket builds a socket (tcp-l4-protocol.cc), with the node's
// RTT estimator, congestion control and recovery types; the runs are the same as without it.
class TimerTracingSocket : public TcpSocketBase
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("haslab::TimerTracingSocket")
                                .SetParent<TcpSocketBase>()
                                .AddConstructor<TimerTracingSocket>();
        return tid;
    }

    static Ptr<TimerTracingSocket> Create(Ptr<Node> node, size_t index)
    {
        Ptr<TcpL4Protocol> l4 = node->GetObject<TcpL4Protocol>();
        TypeIdValue rttType;
        TypeIdValue ccType;
        TypeIdValue recoveryType;
        l4->GetAttribute("RttEstimatorType", rttType);
        l4->GetAttribute("SocketType", ccType);
        l4->GetAttribute("RecoveryType", recoveryType);
        ObjectFactory rtt;
        ObjectFactory cc;
        ObjectFactory recovery;
        rtt.SetTypeId(rttType.Get());
        cc.SetTypeId(ccType.Get());
        recovery.SetTypeId(recoveryType.Get());
        Ptr<TimerTracingSocket> s = CreateObject<TimerTracingSocket>();
        s->m_index = index;
        s->SetNode(node);
        s->SetTcp(l4);
        s->SetRtt(rtt.Create<RttEstimator>());
        s->SetCongestionControlAlgorithm(cc.Create<TcpCongestionOps>());
        s->SetRecoveryAlgorithm(recovery.Create<TcpRecoveryOps>());
        return s;
    }

  protected:
    void ReceivedAck(Ptr<Packet> packet, const TcpHeader& h) override
    {
        TcpSocketBase::ReceivedAck(packet, h);
        Look();
    }

    uint32_t SendDataPacket(SequenceNumber32 seq, uint32_t maxSize, bool withAck) override
    {
        uint32_t sent = TcpSocketBase::SendDataPacket(seq, maxSize, withAck);
        Look();
        return sent;
    }

    void ReTxTimeout() override
    {
        m_lastDeadlineNs = -1;
        TcpSocketBase::ReTxTimeout();
        Look();
    }

  private:
    void Look()
    {
        int64_t deadline = m_retxEvent.IsRunning() ? static_cast<int64_t>(m_retxEvent.GetTs()) : -1;
        if (deadline >= 0 && deadline != m_lastDeadlineNs)
        {
            TraceLine(m_index, "rto_timer", deadline - Simulator::Now().GetNanoSeconds());
        }
        m_lastDeadlineNs = deadline;
    }

    size_t m_index{0};
    int64_t m_lastDeadlineNs{-1};
};

// A sender application: connects at its start time; "bulk" keeps the socket's send buffer full
// for the whole run (haslab's `bulk` app without `bytes`), "chunks" writes chunkBytes right after
// connecting and then every intervalNs (haslab's app/chunks.rs: a chunk written while the previous
// one is still in flight queues behind it).
class Sender : public Application
{
  public:
    void Setup(size_t index, const FlowSpec& spec, Address peer)
    {
        m_index = index;
        m_spec = spec;
        m_peer = peer;
    }

  private:
    void StartApplication() override
    {
        m_socket = g_trace ? Ptr<Socket>(TimerTracingSocket::Create(GetNode(), m_index))
                           : Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
        Ptr<TcpSocketBase> tcp = DynamicCast<TcpSocketBase>(m_socket);
        NS_ABORT_MSG_IF(!tcp, "not a TcpSocketBase");
        size_t i = m_index;
        tcp->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, i));
        tcp->TraceConnectWithoutContext("RTO", MakeBoundCallback(&OnRto, i));
        tcp->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, i));
        if (g_trace)
        {
            tcp->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, i));
            tcp->TraceConnectWithoutContext("SlowStartThreshold",
                                            MakeBoundCallback(&OnSsthresh, i));
            tcp->TraceConnectWithoutContext("HighestRxAck", MakeBoundCallback(&OnHighestRxAck, i));
            tcp->TraceConnectWithoutContext("RTT", MakeBoundCallback(&OnRtt, i));
        }
        m_socket->Bind();
        m_socket->SetConnectCallback(MakeCallback(&Sender::Connected, this),
                                     MakeCallback(&Sender::ConnectFailed, this));
        m_socket->SetSendCallback(MakeCallback(&Sender::Space, this));
        m_socket->Connect(m_peer);
    }

    void StopApplication() override
    {
        if (m_chunkEvent.IsRunning())
        {
            m_chunkEvent.Cancel();
        }
    }

    void Connected(Ptr<Socket>)
    {
        g_flows[m_index].establishedNs = Simulator::Now().GetNanoSeconds();
        if (m_spec.kind == "bulk")
        {
            m_pending = std::numeric_limits<uint64_t>::max();
            Pump();
        }
        else
        {
            Chunk();
        }
    }

    void ConnectFailed(Ptr<Socket>)
    {
        std::cerr << "flow " << m_index << ": connection failed\n";
    }

    void Chunk()
    {
        m_pending += m_spec.chunkBytes;
        Pump();
        m_chunkEvent = Simulator::Schedule(NanoSeconds(m_spec.intervalNs), &Sender::Chunk, this);
    }

    void Space(Ptr<Socket>, uint32_t)
    {
        Pump();
    }

    void Pump()
    {
        while (m_pending > 0)
        {
            uint32_t room = m_socket->GetTxAvailable();
            if (room == 0)
            {
                return;
            }
            uint32_t n = static_cast<uint32_t>(std::min<uint64_t>({m_pending, room, 65536}));
            int sent = m_socket->Send(Create<Packet>(n));
            if (sent <= 0)
            {
                return;
            }
            if (m_pending != std::numeric_limits<uint64_t>::max())
            {
                m_pending -= static_cast<uint64_t>(sent);
            }
        }
    }

    size_t m_index{0};
    FlowSpec m_spec;
    Address m_peer;
    Ptr<Socket> m_socket;
    uint64_t m_pending{0};
    EventId m_chunkEvent;
};

std::vector<std::string>
Split(const std::string& s, char sep)
{
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, sep))
    {
        if (!item.empty())
        {
            out.push_back(item);
        }
    }
    return out;
}

TypeId
CcTypeId(const std::string& name)
{
    // ns-3 3.37 has no TcpWestwoodPlus TypeId: it is TcpWestwood with ProtocolType WestwoodPlus
    // (examples/tcp/tcp-variants-comparison.cc does the same); set per node below.
    std::string id = name == "TcpWestwoodPlus" ? "TcpWestwood" : name;
    TypeId tid;
    NS_ABORT_MSG_UNLESS(TypeId::LookupByNameFailSafe("ns3::" + id, &tid),
                        "unknown congestion control " << name);
    return tid;
}

std::string
Json(double v)
{
    std::ostringstream o;
    o << std::setprecision(17) << v;
    return o.str();
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t pairs = 1;
    uint64_t bottleneckRateBps = 8000000;
    uint64_t bottleneckDelayNs = 40000000;
    uint32_t bottleneckQueuePkts = 67;
    uint64_t accessRateBps = 100000000;
    uint64_t accessDelayNs = 5000000;
    uint32_t accessQueuePkts = 1000;
    std::string flows = "bulk:TcpLinuxReno:0";
    bool sack = true;
    uint32_t delAckCount = 2;
    uint64_t delAckTimeoutNs = 200000000;
    uint32_t initialCwnd = 10;
    uint64_t minRtoNs = 1000000000;
    uint32_t segmentSize = 536;
    bool timestamps = true;
    bool windowScaling = true;
    uint32_t rcvBufBytes = 131072;
    uint32_t sndBufBytes = 131072;
    std::string recovery = "TcpPrrRecovery";
    uint32_t seed = 1;
    uint64_t durationNs = 60000000000ULL;
    std::string tracePath;

    CommandLine cmd(__FILE__);
    cmd.AddValue("pairs", "sender/receiver pairs (at least the number of flows)", pairs);
    cmd.AddValue("bottleneckRateBps", "bottleneck rate, bit/s", bottleneckRateBps);
    cmd.AddValue("bottleneckDelayNs", "bottleneck one-way delay, ns", bottleneckDelayNs);
    cmd.AddValue("bottleneckQueuePkts", "drop-tail limit of each bottleneck direction, packets",
                 bottleneckQueuePkts);
    cmd.AddValue("accessRateBps", "access link rate, bit/s", accessRateBps);
    cmd.AddValue("accessDelayNs", "access link one-way delay, ns", accessDelayNs);
    cmd.AddValue("accessQueuePkts", "drop-tail limit of each access direction, packets",
                 accessQueuePkts);
    cmd.AddValue("flows",
                 "flows separated by ';': bulk:CC:START_NS or chunks:CC:START_NS:BYTES:INTERVAL_NS",
                 flows);
    cmd.AddValue("sack", "SACK option (TcpSocketBase::Sack)", sack);
    cmd.AddValue("delAckCount", "TcpSocket::DelAckCount", delAckCount);
    cmd.AddValue("delAckTimeoutNs", "TcpSocket::DelAckTimeout, ns", delAckTimeoutNs);
    cmd.AddValue("initialCwnd", "TcpSocket::InitialCwnd, segments", initialCwnd);
    cmd.AddValue("minRtoNs", "TcpSocketBase::MinRto, ns", minRtoNs);
    cmd.AddValue("segmentSize", "TcpSocket::SegmentSize, bytes", segmentSize);
    cmd.AddValue("timestamps", "TcpSocketBase::Timestamp", timestamps);
    cmd.AddValue("windowScaling", "TcpSocketBase::WindowScaling", windowScaling);
    cmd.AddValue("rcvBufBytes", "TcpSocket::RcvBufSize", rcvBufBytes);
    cmd.AddValue("sndBufBytes", "TcpSocket::SndBufSize", sndBufBytes);
    cmd.AddValue("recovery", "TcpL4Protocol::RecoveryType (TcpPrrRecovery, TcpClassicRecovery)",
                 recovery);
    cmd.AddValue("seed", "RngSeedManager seed", seed);
    cmd.AddValue("durationNs", "run length, ns", durationNs);
    cmd.AddValue("trace", "write sender events as CSV (time_ns,flow,event,value) to this file",
                 tracePath);
    cmd.Parse(argc, argv);

    std::vector<FlowSpec> specs;
    for (const auto& f : Split(flows, ';'))
    {
        auto parts = Split(f, ':');
        NS_ABORT_MSG_IF(parts.size() < 3, "bad flow " << f);
        FlowSpec s;
        s.kind = parts[0];
        s.cc = parts[1];
        s.startNs = std::stoull(parts[2]);
        if (s.kind == "chunks")
        {
            NS_ABORT_MSG_IF(parts.size() != 5, "chunks needs BYTES and INTERVAL_NS: " << f);
            s.chunkBytes = std::stoull(parts[3]);
            s.intervalNs = std::stoull(parts[4]);
            NS_ABORT_MSG_IF(s.chunkBytes == 0 || s.intervalNs == 0, "bad chunks flow " << f);
        }
        else
        {
            NS_ABORT_MSG_IF(s.kind != "bulk" || parts.size() != 3, "bad flow " << f);
        }
        specs.push_back(s);
    }
    NS_ABORT_MSG_IF(specs.empty() || specs.size() > pairs, "need 1..pairs flows");
    g_flows.resize(specs.size());
    g_durationNs = durationNs;
    if (!tracePath.empty())
    {
        g_trace = std::fopen(tracePath.c_str(), "w");
        NS_ABORT_MSG_IF(!g_trace, "cannot write " << tracePath);
        std::fprintf(g_trace, "time_ns,flow,event,value\n");
    }

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(1);

    // TCP defaults of ns-3 3.37 that differ from haslab's, set from the command line
    // (src/internet/model/tcp-socket.cc: SegmentSize 536, InitialCwnd 10, DelAckCount 2,
    // DelAckTimeout 200 ms, SndBufSize/RcvBufSize 128 KiB; tcp-socket-base.cc: MinRto 1 s,
    // ClockGranularity 1 ms, Timestamp/WindowScaling/Sack true, LimitedTransmit true;
    // tcp-l4-protocol.cc: SocketType TcpCubic, RecoveryType TcpPrrRecovery).
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segmentSize));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initialCwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAckCount));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(NanoSeconds(delAckTimeoutNs)));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rcvBufBytes));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sndBufBytes));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(NanoSeconds(minRtoNs)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(timestamps));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(windowScaling));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(true));
    TypeId recoveryTid;
    NS_ABORT_MSG_UNLESS(TypeId::LookupByNameFailSafe("ns3::" + recovery, &recoveryTid),
                        "unknown recovery " << recovery);
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(recoveryTid));

    NodeContainer left;
    NodeContainer right;
    NodeContainer routers;
    left.Create(pairs);
    right.Create(pairs);
    routers.Create(2);
    InternetStackHelper stack;
    stack.InstallAll();

    // Per-sender congestion control: the TcpL4Protocol of each left node creates its sockets.
    for (size_t i = 0; i < specs.size(); i++)
    {
        Ptr<TcpL4Protocol> l4 = left.Get(i)->GetObject<TcpL4Protocol>();
        l4->SetAttribute("SocketType", TypeIdValue(CcTypeId(specs[i].cc)));
    }
    bool anyWestwoodPlus = false;
    for (const auto& s : specs)
    {
        anyWestwoodPlus |= s.cc == "TcpWestwoodPlus";
    }
    if (anyWestwoodPlus)
    {
        for (const auto& s : specs)
        {
            NS_ABORT_MSG_IF(s.cc == "TcpWestwood",
                            "TcpWestwood and TcpWestwoodPlus cannot be mixed in one run");
        }
        Config::SetDefault("ns3::TcpWestwood::ProtocolType", EnumValue(TcpWestwood::WESTWOODPLUS));
    }

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", DataRateValue(DataRate(accessRateBps)));
    access.SetChannelAttribute("Delay", TimeValue(NanoSeconds(accessDelayNs)));
    access.SetQueue("ns3::DropTailQueue<Packet>",
                    "MaxSize",
                    QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, accessQueuePkts)));
    PointToPointHelper bottleneck;
    // No flow control (no NetDeviceQueueInterface): then Ipv4AddressHelper::Assign installs no
    // queue disc (internet/helper/ipv4-address-helper.cc: "It is useless to install a queue disc
    // if the device has no NetDeviceQueueInterface"), and a full device queue drops the packet in
    // the queue ("Drop" trace). With flow control and no queue disc, the traffic-control layer
    // would drop it instead (traffic-control/model/traffic-control-layer.cc, Send).
    access.DisableFlowControl();
    bottleneck.DisableFlowControl();
    bottleneck.SetDeviceAttribute("DataRate", DataRateValue(DataRate(bottleneckRateBps)));
    bottleneck.SetChannelAttribute("Delay", TimeValue(NanoSeconds(bottleneckDelayNs)));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>",
                        "MaxSize",
                        QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, bottleneckQueuePkts)));

    Ipv4AddressHelper addr;
    NetDeviceContainer core = bottleneck.Install(routers.Get(0), routers.Get(1));
    addr.SetBase("10.255.0.0", "255.255.255.252");
    addr.Assign(core);
    std::vector<Ipv4Address> rightAddr;
    for (uint32_t i = 0; i < pairs; i++)
    {
        NetDeviceContainer l = access.Install(left.Get(i), routers.Get(0));
        NetDeviceContainer r = access.Install(routers.Get(1), right.Get(i));
        std::ostringstream lb;
        std::ostringstream rb;
        lb << "10.1." << i << ".0";
        rb << "10.2." << i << ".0";
        addr.SetBase(lb.str().c_str(), "255.255.255.0");
        addr.Assign(l);
        addr.SetBase(rb.str().c_str(), "255.255.255.0");
        Ipv4InterfaceContainer ri = addr.Assign(r);
        rightAddr.push_back(ri.GetAddress(1));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    Ptr<Queue<Packet>> q = DynamicCast<PointToPointNetDevice>(core.Get(0))->GetQueue();
    q->TraceConnectWithoutContext("Enqueue", MakeCallback(&OnEnqueue));
    q->TraceConnectWithoutContext("Dequeue", MakeCallback(&OnDequeue));
    q->TraceConnectWithoutContext("Drop", MakeCallback(&OnDrop));

    const uint16_t port = 5000;
    for (size_t i = 0; i < specs.size(); i++)
    {
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApp = sinkHelper.Install(right.Get(i));
        sinkApp.Start(Seconds(0));
        Ptr<PacketSink> sink = DynamicCast<PacketSink>(sinkApp.Get(0));
        sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnSinkRx, i));

        Ptr<Sender> app = CreateObject<Sender>();
        app->Setup(i, specs[i], InetSocketAddress(rightAddr[i], port));
        left.Get(i)->AddApplication(app);
        app->SetStartTime(NanoSeconds(specs[i].startNs));
    }

    Simulator::Stop(NanoSeconds(durationNs));
    Simulator::Run();

    // Results: one JSON line.
    std::ostringstream js;
    js << "{\"simulator\":\"ns-3.37\",\"duration_ns\":" << durationNs << ",\"flows\":[";
    double halfS = (durationNs - durationNs / 2) / 1e9;
    for (size_t i = 0; i < specs.size(); i++)
    {
        const FlowStats& f = g_flows[i];
        double goodput = 0;
        if (f.establishedNs >= 0 && static_cast<uint64_t>(f.establishedNs) < durationNs)
        {
            goodput = f.bytesReceived * 8.0 / ((durationNs - f.establishedNs) / 1e9);
        }
        js << (i ? "," : "") << "{\"name\":\"flow" << i << "\",\"cc\":\"" << specs[i].cc
           << "\",\"app\":\"" << specs[i].kind << "\",\"bytes_received\":" << f.bytesReceived
           << ",\"bytes_received_last_half\":" << f.bytesReceivedLastHalf
           << ",\"established_ns\":" << f.establishedNs << ",\"goodput_bps\":" << Json(goodput)
           << ",\"goodput_last_half_bps\":" << Json(f.bytesReceivedLastHalf * 8.0 / halfS)
           << ",\"segments_sent\":" << f.segmentsSent
           << ",\"retransmitted_segments\":" << f.retransmittedSegments
           << ",\"rto_count\":" << f.rtoCount << ",\"loss_episodes\":" << f.lossEpisodes
           << ",\"fast_recovery_count\":" << f.recoveryEpisodes
           << ",\"queue_dropped_packets\":" << f.queueDropped << "}";
    }
    double sojourn = g_bottleneck.dequeued ? static_cast<double>(g_bottleneck.sojournSumNs /
                                                                 g_bottleneck.dequeued)
                                           : 0.0;
    js << "],\"bottleneck\":{\"enqueued_packets\":" << g_bottleneck.enqueued
       << ",\"dequeued_packets\":" << g_bottleneck.dequeued
       << ",\"dropped_packets\":" << g_bottleneck.dropped
       << ",\"sojourn_mean_ns\":" << Json(sojourn) << "}}";
    std::cout << js.str() << std::endl;
    Simulator::Destroy();
    if (g_trace)
    {
        std::fclose(g_trace);
    }
    return 0;
}
