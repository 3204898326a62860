
use builtin;
use str;

set edit:completion:arg-completer[roce-inspect] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'roce-inspect'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'roce-inspect'= {
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand read 'Decode a pcap or pcapng capture file (`-` reads standard input)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'roce-inspect;read'= {
            cand -c 'Stop after N frames (counted after the BPF filter), like `tcpdump -c N`'
            cand --count 'Stop after N frames (counted after the BPF filter), like `tcpdump -c N`'
            cand -f 'libpcap BPF filter expression, like tcpdump''s, e.g. `-f ''udp port 4791 and host 10.0.0.1''`'
            cand --filter 'libpcap BPF filter expression, like tcpdump''s, e.g. `-f ''udp port 4791 and host 10.0.0.1''`'
            cand --qp 'Show only packets to this destination QP (decimal or 0x hex), e.g. `--qp 0x11`'
            cand --opcode 'Show only this opcode: a number (`--opcode 0x0a`), a full name (`RC_RDMA_WRITE_ONLY`) or an operation for every transport (`RDMA_WRITE_ONLY`, `ACKNOWLEDGE`, `CNP`)'
            cand --color 'Colour: auto (terminal and NO_COLOR unset), always, never'
            cand --roce-port 'Also decode UDP destination port N as RoCEv2 (repeatable), e.g. `--roce-port 9741`'
            cand --json 'One JSON object per packet per line (NDJSON), for jq: `--json | jq .bth.psn`'
            cand -V 'Print the full header tree of every packet, like `tshark -V`'
            cand --verbose 'Print the full header tree of every packet, like `tshark -V`'
            cand --all 'Also list frames that are not RoCE, one short line each'
            cand -n 'Accepted for tcpdump compatibility; addresses are never resolved to names'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'roce-inspect;help'= {
            cand read 'Decode a pcap or pcapng capture file (`-` reads standard input)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'roce-inspect;help;read'= {
        }
        &'roce-inspect;help;help'= {
        }
    ]
    $completions[$command]
}
