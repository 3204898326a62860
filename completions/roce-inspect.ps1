
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'roce-inspect' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'roce-inspect'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'roce-inspect' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('read', 'read', [CompletionResultType]::ParameterValue, 'Decode a pcap or pcapng capture file (`-` reads standard input)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'roce-inspect;read' {
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Stop after N frames (counted after the BPF filter), like `tcpdump -c N`')
            [CompletionResult]::new('--count', '--count', [CompletionResultType]::ParameterName, 'Stop after N frames (counted after the BPF filter), like `tcpdump -c N`')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'libpcap BPF filter expression, like tcpdump''s, e.g. `-f ''udp port 4791 and host 10.0.0.1''`')
            [CompletionResult]::new('--filter', '--filter', [CompletionResultType]::ParameterName, 'libpcap BPF filter expression, like tcpdump''s, e.g. `-f ''udp port 4791 and host 10.0.0.1''`')
            [CompletionResult]::new('--qp', '--qp', [CompletionResultType]::ParameterName, 'Show only packets to this destination QP (decimal or 0x hex), e.g. `--qp 0x11`')
            [CompletionResult]::new('--opcode', '--opcode', [CompletionResultType]::ParameterName, 'Show only this opcode: a number (`--opcode 0x0a`), a full name (`RC_RDMA_WRITE_ONLY`) or an operation for every transport (`RDMA_WRITE_ONLY`, `ACKNOWLEDGE`, `CNP`)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (terminal and NO_COLOR unset), always, never')
            [CompletionResult]::new('--roce-port', '--roce-port', [CompletionResultType]::ParameterName, 'Also decode UDP destination port N as RoCEv2 (repeatable), e.g. `--roce-port 9741`')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'One JSON object per packet per line (NDJSON), for jq: `--json | jq .bth.psn`')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print the full header tree of every packet, like `tshark -V`')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print the full header tree of every packet, like `tshark -V`')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Also list frames that are not RoCE, one short line each')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Accepted for tcpdump compatibility; addresses are never resolved to names')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'roce-inspect;help' {
            [CompletionResult]::new('read', 'read', [CompletionResultType]::ParameterValue, 'Decode a pcap or pcapng capture file (`-` reads standard input)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'roce-inspect;help;read' {
            break
        }
        'roce-inspect;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
