import ArgumentParser
import Foundation
import LockstepJACK
import LockstepSession

/// The shell completions ArgumentParser's `CompletionKind.custom` runs (the script from
/// `lockstep --generate-completion-script bash|zsh|fish` calls back into lockstep for them).
enum Completions {
    /// The JACK ports of the running server — the `--server NAME` on the line, else the default —
    /// for `--connect`, `--port`, `--record-port` and `--midi-connect`. None when no server runs
    /// (a completion never starts one).
    static let ports = CompletionKind.custom { words, _, prefix in
        let server = words.firstIndex(of: "--server").flatMap { $0 + 1 < words.count ? words[$0 + 1] : nil }
        let names = ((try? JACKGraph.listPorts(server: server)) ?? []).map(\.name)
        return names.filter { $0.hasPrefix(prefix) }
    }

    /// `CUE@` for every cue of the session file on the line (the first `.yaml`/`.yml` word), for
    /// `session render --go CUE@TIME`. None when the file cannot be read or parsed.
    static let cues = CompletionKind.custom { words, _, prefix in
        guard let path = words.first(where: { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }),
              let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        var parser = SessionParser(path: path, text: text)
        guard let document = try? parser.parse() else { return [] }
        return document.cues.map { $0.name + "@" }.filter { $0.hasPrefix(prefix) }
    }
}
