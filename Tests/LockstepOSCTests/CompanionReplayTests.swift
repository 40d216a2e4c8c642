import Foundation
import LockstepControl
import LockstepOSC
import LockstepSession
import LockstepTestSupport
import Testing

/// Every action of Bitfocus Companion's two QLab modules that concerns cues, transport, selection
/// or levels, replayed as the module's source builds it (Tests/Fixtures/companion-qlab-actions.json,
/// catalogued from the modules' sources: the address, the `/workspace/{id}` prefix, the arguments):
/// each is answered `ok`; the audition actions reach the audition of the selected cue.
@Suite("Companion's QLab modules: every action replayed from their sources (offline, no socket)")
struct CompanionReplayTests {
    struct Action: Decodable {
        struct Argument: Decodable { var type: String; var value: String? }
        var module: String
        var id: String
        /// (Nil for an action that sends no OSC, such as copying a cue's ID.)
        var address: String?
        var workspacePrefix: Bool?
        var arguments: [Argument]
        var relevant: Bool
    }
    struct Catalogue: Decodable { var actions: [Action] }

    /// (The bell stops a second before its file's end, so a Companion "+1 s" of its duration or
    /// end time fits in the file; past it, the edit is refused.)
    static let session = """
        channels: 1
        cues:
          - { name: bed, file: bed.wav, at: 0, loop: forever }
          - { name: bell, file: bell.wav, at: manual, number: 1, to: 2 }
          - { name: horn, file: bell.wav, at: manual, number: 2 }
        """

    /// The actions that audition cues: they reach the run's audition, which offline (a device
    /// without per-queue outputs) answers with the device's error; live, `AuditionTests` hears
    /// them. Matched on the address's last part.
    static let auditions: Set<String> = ["audition", "auditionGo", "auditionPreview", "preview"]

    static func catalogue() throws -> [Action] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("Fixtures/companion-qlab-actions.json"))
        return try JSONDecoder().decode(Catalogue.self, from: data).actions.filter { $0.relevant && $0.address != nil }
    }

    /// Whether the action is one of ``auditions``.
    static func isAudition(_ address: String) -> Bool {
        address.split(separator: "/").contains { auditions.contains(String($0)) }
    }

    @Test("each relevant action of both modules, in the module's own form, is answered ok; the audition ones reach the audition of the cue")
    func replay() throws {
        let actions = try Self.catalogue()
        #expect(actions.count > 150, "\(actions.count) actions")
        var failures: [String] = []
        for action in actions {
            let bench = try ServerBench(.init(repliesToSender: true), session: Self.session,
                                        audio: [("bed.wav", Signals.constant(0.125, frames: 4800)), ("bell.wav", Signals.constant(0.25, frames: 48000 * 3))])
            bench.dispatcher.audition = CueAudition(channels: 1) { _ in }
            let workspace = bench.server.workspace
            let bellID = workspace.cueIDs[1]
            var address = action.address!
                .replacingOccurrences(of: "{cue_number}", with: "1").replacingOccurrences(of: "{cue_id}", with: bellID)
                .replacingOccurrences(of: "{cuelist_id}", with: workspace.cueListID).replacingOccurrences(of: "{panic_cl}", with: workspace.cueListID)
                .replacingOccurrences(of: "{panic_ws}", with: workspace.uniqueID).replacingOccurrences(of: "{workspace_id}", with: workspace.uniqueID)
            if action.workspacePrefix == true { address = "/workspace/\(workspace.uniqueID)" + address }
            let arguments: [OSCArgument] = action.arguments.compactMap { argument in
                switch argument.type {
                case "f": return .float(1)
                case "i": return .int32(argument.value?.hasPrefix("{cont") == true ? 1 : 0)
                case "s": return .string("renamed")
                default: return nil
                }
            }
            // What the actions need: the selected cue (bell) playing, the session or cue paused for a resume.
            let background = bench.show.renderInBackground()
            defer { background.stop() }
            let client: UInt16 = 40000
            func ask(_ address: String, _ arguments: [OSCArgument] = []) throws -> [String: Any] {
                try bench.receive(OSCMessage(address, arguments), from: client)
                let replies = bench.take().filter { $0.message.address.hasPrefix("/reply") }
                return try #require(replies.last.flatMap { OSCTestPeer.json($0.message) }, "\(address): no reply")
            }
            _ = try ask("/cue/1/start")                                 // bell plays…
            _ = try ask("/select/1")                                    // …and is selected
            if address.hasSuffix("/resume") { _ = try ask(address.replacingOccurrences(of: "/resume", with: "/pause")) }
            let reply = try ask(address, arguments)
            let ok = reply["status"] as? String == "ok"
            if Self.isAudition(address) {
                let answer = reply["data"] as? String ?? ""
                if !answer.hasPrefix("audition of 'bell': ") || !answer.contains("has no per-queue outputs") {
                    failures.append("\(action.module) \(action.id) \(address): \(answer), not the audition of bell")
                }
            } else if !ok {
                failures.append("\(action.module) \(action.id) \(address) \(arguments): \(reply["data"] ?? "")")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) actions:\n\(failures.joined(separator: "\n"))")
    }
}
