import Foundation
import LockstepTestSupport
import Testing

/// The bash completion script `lockstep --generate-completion-script bash` prints, run by bash as
/// it completes a line: subcommands, and the session's cue names for `session render --go`
/// (ArgumentParser's custom completion calling back into lockstep).
@Suite("shell completion")
struct CompletionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// What bash offers for `line` with the cursor at its end (`COMPREPLY`), one per line.
    func complete(_ line: String) throws -> [String] {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-complete")
        let script = temp.path + "/lockstep.bash"
        let generated = try CLI.run(["--generate-completion-script", "bash"])
        #expect(generated.status == 0, "\(generated.stderr)")
        try generated.stdout.write(toFile: script, atomically: true, encoding: .utf8)
        let program = """
            source '\(script)'
            COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}
            read -ra COMP_WORDS <<< "$COMP_LINE"
            [[ "$COMP_LINE" == *' ' ]] && COMP_WORDS+=('')
            COMP_WORDS[0]='\(CLI.binary)'
            COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
            # bash calls a completion function with the command, the word being completed and the one before it.
            _lockstep lockstep "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try CLI.run(["-c", program], in: Self.root, executable: "/bin/bash")
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test("subcommands complete")
    func subcommands() throws {
        let offered = try complete("lockstep se")
        #expect(offered == ["session"], "\(offered)")
    }

    @Test("session render --go completes the session's cue names as CUE@")
    func cueNames() throws {
        let all = try complete("lockstep session render Examples/Sessions/playlist.yaml -o x.wav --go ")
        #expect(Set(all) == ["opener@", "second@", "closer@", "bed@", "bell@"], "\(all)")
        let some = try complete("lockstep session render Examples/Sessions/playlist.yaml -o x.wav --go be")
        #expect(Set(some) == ["bed@", "bell@"], "\(some)")
    }
}
