# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_roce_inspect_global_optspecs
    string join \n h/help V/version
end

function __fish_roce_inspect_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_roce_inspect_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_roce_inspect_using_subcommand
    set -l cmd (__fish_roce_inspect_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c roce-inspect -n "__fish_roce_inspect_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roce-inspect -n "__fish_roce_inspect_needs_command" -s V -l version -d 'Print version'
complete -c roce-inspect -n "__fish_roce_inspect_needs_command" -f -a "read" -d 'Decode a pcap or pcapng capture file (`-` reads standard input)'
complete -c roce-inspect -n "__fish_roce_inspect_needs_command" -f -a "capture" -d 'Capture live from a network interface and decode RoCE packets as they arrive'
complete -c roce-inspect -n "__fish_roce_inspect_needs_command" -f -a "generate" -d 'Send RDMA WRITEs over libibverbs from host or GPU memory, like perftest\'s ib_write_bw'
complete -c roce-inspect -n "__fish_roce_inspect_needs_command" -f -a "correlate" -d 'Match one job\'s packets across several captures (one per host or mirror): loss located to a link, capture clocks aligned, one-way delay per link and direction'
complete -c roce-inspect -n "__fish_roce_inspect_needs_command" -f -a "nccl" -d 'See one NCCL job through NCCL\'s eyes: its connections (clear-to-send and data writes), steps, rings and trees, and the straggler of every step, from one capture per host'
complete -c roce-inspect -n "__fish_roce_inspect_needs_command" -f -a "export" -d 'Write capture files as Parquet tables (packets, flows, connections, messages, gaps) for DuckDB, Polars or Spark'
complete -c roce-inspect -n "__fish_roce_inspect_needs_command" -f -a "list" -d 'List the interfaces libpcap can capture on, and how to capture NIC-offloaded RoCE'
complete -c roce-inspect -n "__fish_roce_inspect_needs_command" -f -a "interfaces" -d 'List the interfaces libpcap can capture on, and how to capture NIC-offloaded RoCE'
complete -c roce-inspect -n "__fish_roce_inspect_needs_command" -f -a "plot" -d 'Draw a capture: PSN against time, rate and congestion, latency CDFs, message time lines, NCCL\'s steps (SVG, or PNG when OUT ends in .png)'
complete -c roce-inspect -n "__fish_roce_inspect_needs_command" -f -a "top" -d 'A live dashboard of RoCE traffic: per-QP rates, packets, retransmissions, PSN gaps, NAKs, RNR NAKs, CE marks, CNPs and ACK RTT, updated as they happen (needs a terminal)'
complete -c roce-inspect -n "__fish_roce_inspect_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -s r -d 'The capture file, tcpdump style (`read -r trace.pcap`); same as FILE' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -s w -l write -d 'Write the shown frames (after -Y, --qp, --opcode), unmodified, to this pcapng file instead of printing them, each with its analysis marks as the packet comment (Wireshark\'s `frame.comment`), e.g. `-Y analysis.retransmission -w resent.pcapng`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l threads -d 'Threads that decode and format packets (default: the cores available), while the calling thread analyses them in order and writes the output, which is the same whatever the number; 1 reads on one thread. Several threads are used while a pcap/pcapng file is read from its memory mapping (not standard input, not with --mirror-time)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -s c -l count -d 'Stop after N frames (counted after the BPF filter), like `tcpdump -c N`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -s f -l filter -d 'libpcap BPF filter expression, like tcpdump\'s, e.g. `-f \'udp port 4791 and host 10.0.0.1\'`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l qp -d 'Show only packets to this destination QP (decimal or 0x hex), e.g. `--qp 0x11`. Reports (`--summary`, `--messages`, `--gaps`) still cover every flow' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l opcode -d 'Show only this opcode: a number (`--opcode 0x0a`), a full name (`RC_RDMA_WRITE_ONLY`) or an operation for every transport (`RDMA_WRITE_ONLY`, `ACKNOWLEDGE`, `CNP`). Reports still cover every packet' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -s Y -l display-filter -d 'Show only the packets this display filter passes: Wireshark\'s display-filter language on the `--json` keys joined by dots, e.g. `-Y \'bth.dest_qp == 0x11 && bth.psn > 100\'`, `-Y \'aeth.nak || analysis.retransmission\'` (--list-fields lists the fields). Reports still cover every packet' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -s T -d 'Output format, as tshark\'s -T: `fields` prints the -e fields of each packet, one line each (`-T fields -e frame -e bth.psn -e analysis.retransmission`)' -r -f -a "fields\t''"
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -s e -d 'A field printed by -T fields (repeatable, in order); --list-fields lists them' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -s E -d 'A -T fields option as tshark\'s -E (repeatable): `separator=,` (`/t` tab, `/s` space), `header=y`, `quote=d|s|n`, `aggregator=;`, `occurrence=f|l|a|N`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l color -d 'Colour: auto (terminal and NO_COLOR unset), always, never' -r -f -a "auto\t'Colour when stdout is a terminal and NO_COLOR is unset or empty'
always\t'Always colour (overrides NO_COLOR)'
never\t'Never colour'"
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l roce-port -d 'Also decode UDP destination port N as RoCEv2 (repeatable), e.g. `--roce-port 9741`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l vxlan-port -d 'Decapsulate VXLAN on UDP destination port N instead of 4789 (repeatable), e.g. `--vxlan-port 8472` for Linux\'s old default' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l mtu -d 'Path MTU in bytes for READ PSN reservation, instead of inferring it from FIRST/MIDDLE payloads, e.g. `--mtu 4096`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l max-flows -d 'Most flows tracked at once; RoCE frames of further flows are counted as untracked, so memory stays bounded when QPNs are sprayed' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l html -d 'Also write a self-contained HTML report (tables, loss stories, congestion, plots) to FILE; without -q/--summary/--messages/--gaps nothing else is printed' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l findings -d 'Findings shown at the top of the text report: `top` (the most severe, within 15 lines) or `all` (every one, each with its cause and advice)' -r -f -a "top\t'The most severe, within [`SHORT_LINES`] lines, and how many more there are'
all\t'Every finding, each with its cause and advice'"
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l list-fields -d 'List every field that -Y and -T fields -e read, with its type and description (like `tshark -G fields`), and exit'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l marks -d 'Run the analysis alongside the packet lines and mark each packet with its verdicts (`[RETX]`, `[GAP n]`, `[NAKed]`, …; the `analysis` object in --json). Implied by a -Y filter that reads `analysis.*`'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l json -d 'One JSON object per packet per line (NDJSON), for jq: `--json | jq .bth.psn`'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -s V -l verbose -d 'Print the full header tree of every packet, like `tshark -V`'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l all -d 'Also list frames that are not RoCE, one short line each'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -s n -d 'Accepted for tcpdump compatibility; addresses are never resolved to names'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l mirror-time -d 'Time mirrored frames by their ERSPAN type III hardware timestamp instead of the collector\'s capture time (frames without one keep the capture time)'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l summary -d 'Print the analysis report at the end: QP connections and flows, PSN gaps and retransmissions, NAKs, ECN/CNP congestion, ICRC failures. With `--json`, one JSON document instead of per-packet lines: `read t.pcap --summary --json | jq \'.flows[] | {dest_qp, psn}\'`'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -s q -l quiet -d 'Print only the reports, not the packets (`-q` alone means `--summary -q`), like `tshark -q`'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l messages -d 'List the reassembled messages (SEND, WRITE, READ, atomics) per flow; NDJSON with `--json`'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l gaps -d 'List the PSN gaps with their NAK and retransmission (the loss stories); NDJSON with `--json`'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l encap-session -d 'Split flows by mirror session too: the ERSPAN session ID or VXLAN VNI the frame came through (one job mirrored from several ports)'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -l wide -d 'Print every column of the report tables however wide they are (by default, on a terminal, the least important columns are hidden to fit its width)'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand read" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -s i -d 'The interface, tcpdump style (`capture -i eth0`); same as IFACE' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l snaplen -d 'Bytes kept of each frame (1-262144); longer frames are cut and their ICRC is reported as not checkable' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l buffer-size -d 'Kernel capture buffer size: bytes, or with a K, M or G suffix (powers of 1024)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -s w -l write -d 'Also write every captured frame, unmodified, to this pcap file (valid even after Ctrl-C); with -Y, only the shown frames, as pcapng with their analysis marks as packet comments (complete once the capture stops)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l duration -d 'Stop after this many seconds (fractions allowed), e.g. `--duration 30`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l parquet -d 'Also write every RoCE frame and, at the end, the report as Parquet tables under DIR, as `export` does; the capture is named after the -w file, else IFACE-UNIXTIME' -r -F
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l host -d 'With --parquet: the `host` column (default: this machine\'s host name)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -s Z -l relinquish-privileges -d 'Once the device and the -w file are open, run as USER instead of root (tcpdump\'s -Z): default the user behind sudo (SUDO_USER), else `nobody`; `-Z root` keeps root. The -w file and a new --parquet folder are given to USER' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -s c -l count -d 'Stop after N frames (counted after the BPF filter), like `tcpdump -c N`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -s f -l filter -d 'libpcap BPF filter expression, like tcpdump\'s, e.g. `-f \'udp port 4791 and host 10.0.0.1\'`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l qp -d 'Show only packets to this destination QP (decimal or 0x hex), e.g. `--qp 0x11`. Reports (`--summary`, `--messages`, `--gaps`) still cover every flow' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l opcode -d 'Show only this opcode: a number (`--opcode 0x0a`), a full name (`RC_RDMA_WRITE_ONLY`) or an operation for every transport (`RDMA_WRITE_ONLY`, `ACKNOWLEDGE`, `CNP`). Reports still cover every packet' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -s Y -l display-filter -d 'Show only the packets this display filter passes: Wireshark\'s display-filter language on the `--json` keys joined by dots, e.g. `-Y \'bth.dest_qp == 0x11 && bth.psn > 100\'`, `-Y \'aeth.nak || analysis.retransmission\'` (--list-fields lists the fields). Reports still cover every packet' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -s T -d 'Output format, as tshark\'s -T: `fields` prints the -e fields of each packet, one line each (`-T fields -e frame -e bth.psn -e analysis.retransmission`)' -r -f -a "fields\t''"
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -s e -d 'A field printed by -T fields (repeatable, in order); --list-fields lists them' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -s E -d 'A -T fields option as tshark\'s -E (repeatable): `separator=,` (`/t` tab, `/s` space), `header=y`, `quote=d|s|n`, `aggregator=;`, `occurrence=f|l|a|N`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l color -d 'Colour: auto (terminal and NO_COLOR unset), always, never' -r -f -a "auto\t'Colour when stdout is a terminal and NO_COLOR is unset or empty'
always\t'Always colour (overrides NO_COLOR)'
never\t'Never colour'"
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l roce-port -d 'Also decode UDP destination port N as RoCEv2 (repeatable), e.g. `--roce-port 9741`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l vxlan-port -d 'Decapsulate VXLAN on UDP destination port N instead of 4789 (repeatable), e.g. `--vxlan-port 8472` for Linux\'s old default' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l mtu -d 'Path MTU in bytes for READ PSN reservation, instead of inferring it from FIRST/MIDDLE payloads, e.g. `--mtu 4096`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l max-flows -d 'Most flows tracked at once; RoCE frames of further flows are counted as untracked, so memory stays bounded when QPNs are sprayed' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l html -d 'Also write a self-contained HTML report (tables, loss stories, congestion, plots) to FILE; without -q/--summary/--messages/--gaps nothing else is printed' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l findings -d 'Findings shown at the top of the text report: `top` (the most severe, within 15 lines) or `all` (every one, each with its cause and advice)' -r -f -a "top\t'The most severe, within [`SHORT_LINES`] lines, and how many more there are'
all\t'Every finding, each with its cause and advice'"
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l promisc -d 'Put the interface into promiscuous mode (off by default; a mirror port usually needs it)'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l buffered -d 'Hand packets over in blocks (at most 100 ms late) instead of one by one: much higher packet rates without drops. The default when standard output is not a terminal or a pipe (e.g. `-w FILE > /dev/null`); this forces it for terminals and pipes too'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l marks -d 'Run the analysis alongside the packet lines and mark each packet with its verdicts (`[RETX]`, `[GAP n]`, `[NAKed]`, …; the `analysis` object in --json). Implied by a -Y filter that reads `analysis.*`'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l json -d 'One JSON object per packet per line (NDJSON), for jq: `--json | jq .bth.psn`'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -s V -l verbose -d 'Print the full header tree of every packet, like `tshark -V`'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l all -d 'Also list frames that are not RoCE, one short line each'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -s n -d 'Accepted for tcpdump compatibility; addresses are never resolved to names'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l mirror-time -d 'Time mirrored frames by their ERSPAN type III hardware timestamp instead of the collector\'s capture time (frames without one keep the capture time)'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l summary -d 'Print the analysis report at the end: QP connections and flows, PSN gaps and retransmissions, NAKs, ECN/CNP congestion, ICRC failures. With `--json`, one JSON document instead of per-packet lines: `read t.pcap --summary --json | jq \'.flows[] | {dest_qp, psn}\'`'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -s q -l quiet -d 'Print only the reports, not the packets (`-q` alone means `--summary -q`), like `tshark -q`'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l messages -d 'List the reassembled messages (SEND, WRITE, READ, atomics) per flow; NDJSON with `--json`'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l gaps -d 'List the PSN gaps with their NAK and retransmission (the loss stories); NDJSON with `--json`'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l encap-session -d 'Split flows by mirror session too: the ERSPAN session ID or VXLAN VNI the frame came through (one job mirrored from several ports)'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -l wide -d 'Print every column of the report tables however wide they are (by default, on a terminal, the least important columns are hidden to fit its width)'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand capture" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand generate" -l peer -d 'Be the client and write to this server: an IPv4 address, an IPv6 address, or a GID' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand generate" -l oob-port -d 'TCP port of the out-of-band exchange (QPN, PSN, GID, rkey, address, MTU)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand generate" -l device -d 'RDMA device to use (default: the first device with an active Ethernet port)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand generate" -l ib-port -d 'Port number on the device (1-based, as in `ibv_devinfo`)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand generate" -l gid-index -d 'GID-table index to send from (default: the first RoCE v2 GID of the peer\'s address family, preferring non-link-local ones)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand generate" -l gpu -d 'Put the buffer in the memory of CUDA GPU N instead of host memory (needs the `gpu` build feature, an NVIDIA driver, and a NIC that can register GPU memory through dma-buf or nvidia-peermem)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand generate" -l size -d 'Bytes per RDMA WRITE (client), with an optional K, M or G suffix (powers of 1024)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand generate" -l iters -d 'WRITEs per QP (client); the default when --duration is not given is 5000, perftest\'s' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand generate" -l duration -d 'Send for this many seconds instead of a number of WRITEs (client)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand generate" -l tx-depth -d 'WRITEs outstanding per QP (client): the send-queue depth' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand generate" -l qps -d 'Number of parallel RC QPs (client); each writes to its own slice of the server\'s buffer' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand generate" -l tclass -d 'IP traffic class of our packets (the GRH traffic class: DSCP << 2 | ECN)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand generate" -l mtu -d 'Cap the path MTU (bytes: 256, 512, 1024, 2048 or 4096); otherwise the smaller of the two ports\' active MTUs' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand generate" -l listen -d 'Be the server: wait for a client on --oob-port and let it write into our buffer'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand generate" -l imm -d 'Send RDMA WRITE WITH IMMEDIATE instead of RDMA WRITE (client); the server posts receives and counts the immediates'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand generate" -l json -d 'Print the QP lines and the results as one JSON document instead of text and a table'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand generate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand correlate" -s f -l filter -d 'libpcap BPF filter expression applied to every file, e.g. `-f \'host 10.0.0.1\'`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand correlate" -l roce-port -d 'Also decode UDP destination port N as RoCEv2 (repeatable)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand correlate" -l window -d 'Seconds a packet copy waits for its copy at the link\'s other end (fractions allowed); copies unmatched after it are lost or missed. Bounds memory' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand correlate" -l color -d 'Colour: auto (terminal and NO_COLOR unset), always, never' -r -f -a "auto\t'Colour when stdout is a terminal and NO_COLOR is unset or empty'
always\t'Always colour (overrides NO_COLOR)'
never\t'Never colour'"
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand correlate" -l json -d 'Print one JSON document instead of tables'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand correlate" -l wide -d 'Print every column of the tables however wide they are (by default, on a terminal, the least important columns are hidden to fit its width), as for `read --wide`'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand correlate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand nccl" -s f -l filter -d 'libpcap BPF filter expression applied to every file, e.g. `-f \'host 10.0.0.1\'`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand nccl" -l roce-port -d 'Also decode UDP destination port N as RoCEv2 (repeatable)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand nccl" -l collective -d 'The collective that ran, for the algorithm bandwidth (busbw / nccl-tests\' factor); needs --ranks' -r -f -a "allreduce\t'AllReduce: busbw = algbw × 2(n−1)/n'
allgather\t'AllGather: × (n−1)/n'
reducescatter\t'ReduceScatter: × (n−1)/n'
alltoall\t'AllToAll: × (n−1)/n'
broadcast\t'Broadcast: × 1'
reduce\t'Reduce: × 1'"
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand nccl" -l ranks -d 'Ranks of the job, for --collective' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand nccl" -l html -d 'Also write a self-contained HTML page (connections, a timeline of every step) to FILE' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand nccl" -l json -d 'Print one JSON document instead of tables'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand nccl" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand export" -l parquet -d 'Dataset folder: the tables go to DIR/TABLE/capture=NAME/part-0.parquet (NAME: the file name), replacing an earlier export of a capture of the same name' -r -F
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand export" -l host -d 'The `host` column: the machine or switch port the captures come from (default: each file\'s name without its extension)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand export" -s f -l filter -d 'libpcap BPF filter expression applied before decoding, as for `read`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand export" -l roce-port -d 'Also decode UDP destination port N as RoCEv2 (repeatable), as for `read`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand export" -l mtu -d 'Path MTU in bytes for READ PSN reservation, as for `read` (256, 512, 1024, 2048, 4096)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand export" -l max-flows -d 'Most flows tracked at once, as for `read`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand list" -s h -l help -d 'Print help'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand interfaces" -s h -l help -d 'Print help'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand plot" -l kind -d 'What to draw: psn (PSN against time, tcptrace style), rate (throughput and congestion), latency (ACK RTT and READ latency CDFs), messages (message time lines), nccl (NCCL\'s steps, one row per connection, as `nccl --html`)' -r -f -a "psn\t'PSN (unwrapped) against time per flow, with retransmissions, gaps, NAKs, ACKs, CE, CNPs'
rate\t'Throughput per flow in time bins, with CE fraction and CNP arrivals below'
latency\t'ACK RTT and READ latency distributions (CDF, log time axis) per flow'
messages\t'One bar per message on a time line per flow (failed ones marked)'
nccl\t'NCCL\'s steps: one row per NCCL connection, each step a bar (`nccl --html`\'s timeline)'"
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand plot" -s o -l output -d 'Output file: SVG, or PNG when it ends in `.png`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand plot" -l qp -d 'Only flows to this destination QP (decimal or 0x hex)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand plot" -s f -l filter -d 'libpcap BPF filter expression applied while reading, as for `read -f`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand plot" -l from -d 'Start of the time span drawn, seconds since the first frame' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand plot" -l to -d 'End of the time span drawn, seconds since the first frame' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand plot" -l bin -d 'Rate bin width in seconds (`--kind rate`), e.g. `--bin 0.0001`; default: about 1/60 of the span' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand plot" -l top -d 'Most flows drawn: the largest by payload bytes' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand plot" -l width -d 'Picture width in pixels' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand plot" -l scale -d 'PNG pixels per picture pixel: `--scale 2` draws a PNG twice as large with the same layout, for high-DPI screens (SVGs are unaffected)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand plot" -l mtu -d 'Path MTU in bytes for READ PSN reservation, as for `read --mtu`' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand plot" -l roce-port -d 'Also decode UDP destination port N as RoCEv2 (repeatable)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand plot" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -s i -d 'The interface, tcpdump style; same as IFACE' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -s r -d 'Replay a capture file (pcap or pcapng) at its own pace instead of capturing' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -l speed -d 'With -r: replay N times faster than the capture was taken (e.g. 10, 0.5)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -s f -l filter -d 'libpcap BPF filter expression instead of the default RoCE filter' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -s Y -l display-filter -d 'Display filter at the start (as `/` sets it): the table counts only the packets it passes, e.g. `-Y \'bth.dest_qp == 0x11\'`; the analysis still sees every packet' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -l snaplen -d 'Bytes kept of each frame (1-262144)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -l buffer-size -d 'Kernel capture buffer size: bytes, or with a K, M or G suffix' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -l keep -d 'Most bytes of the latest frames kept in memory for `w` (written as pcapng): bytes, or with a K, M or G suffix; 0 keeps none' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -l save-dir -d 'Folder `w` writes its pcapng files into' -r -F
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -l roce-port -d 'Also decode UDP destination port N as RoCEv2 (repeatable)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -l vxlan-port -d 'Decapsulate VXLAN on UDP destination port N instead of 4789 (repeatable)' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -l mtu -d 'Path MTU in bytes for READ PSN reservation, instead of inferring it' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -l max-flows -d 'Most flows tracked at once' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -s Z -l relinquish-privileges -d 'Once the device is open, run as USER instead of root (tcpdump\'s -Z, as `capture`): default the user behind sudo (SUDO_USER), else `nobody`; `-Z root` keeps root. `w` then writes as USER; a --save-dir that does not exist yet is created and given to USER' -r
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -l promisc -d 'Put the interface into promiscuous mode'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -l summary -d 'Print the analysis report (as `read --summary`) after the screen closes; with --json, the report\'s JSON document'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -l json -d 'With --summary: the report as one JSON document'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -l encap-session -d 'Split flows by mirror session (ERSPAN session ID / VXLAN VNI) too'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand top" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand help; and not __fish_seen_subcommand_from read capture generate correlate nccl export list plot top help" -f -a "read" -d 'Decode a pcap or pcapng capture file (`-` reads standard input)'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand help; and not __fish_seen_subcommand_from read capture generate correlate nccl export list plot top help" -f -a "capture" -d 'Capture live from a network interface and decode RoCE packets as they arrive'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand help; and not __fish_seen_subcommand_from read capture generate correlate nccl export list plot top help" -f -a "generate" -d 'Send RDMA WRITEs over libibverbs from host or GPU memory, like perftest\'s ib_write_bw'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand help; and not __fish_seen_subcommand_from read capture generate correlate nccl export list plot top help" -f -a "correlate" -d 'Match one job\'s packets across several captures (one per host or mirror): loss located to a link, capture clocks aligned, one-way delay per link and direction'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand help; and not __fish_seen_subcommand_from read capture generate correlate nccl export list plot top help" -f -a "nccl" -d 'See one NCCL job through NCCL\'s eyes: its connections (clear-to-send and data writes), steps, rings and trees, and the straggler of every step, from one capture per host'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand help; and not __fish_seen_subcommand_from read capture generate correlate nccl export list plot top help" -f -a "export" -d 'Write capture files as Parquet tables (packets, flows, connections, messages, gaps) for DuckDB, Polars or Spark'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand help; and not __fish_seen_subcommand_from read capture generate correlate nccl export list plot top help" -f -a "list" -d 'List the interfaces libpcap can capture on, and how to capture NIC-offloaded RoCE'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand help; and not __fish_seen_subcommand_from read capture generate correlate nccl export list plot top help" -f -a "plot" -d 'Draw a capture: PSN against time, rate and congestion, latency CDFs, message time lines, NCCL\'s steps (SVG, or PNG when OUT ends in .png)'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand help; and not __fish_seen_subcommand_from read capture generate correlate nccl export list plot top help" -f -a "top" -d 'A live dashboard of RoCE traffic: per-QP rates, packets, retransmissions, PSN gaps, NAKs, RNR NAKs, CE marks, CNPs and ACK RTT, updated as they happen (needs a terminal)'
complete -c roce-inspect -n "__fish_roce_inspect_using_subcommand help; and not __fish_seen_subcommand_from read capture generate correlate nccl export list plot top help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
