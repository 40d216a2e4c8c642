import Foundation
import LockstepControl
import LockstepTestSupport
import LockstepWeb
import Testing

/// The meters pushed to a page: every layer's in the first a page gets and once a second, else
/// only the layers whose meter changed.
@Suite("The web page's meters: changes only, every layer once a second and to a page that comes")
struct WebMetersPushTests {
    static let session = "channels: 1\nlayers: { a: {}, b: {}, c: {} }\ncues:\n  - { name: x, layer: a, file: tone.wav, at: 0 }\n"

    /// The meters messages `page` gets within `seconds`, as JSON objects.
    static func meters(_ page: WebSocketTestClient, for seconds: Double) -> [[String: Any]] {
        var found: [[String: Any]] = []
        let end = Date().addingTimeInterval(seconds)
        while let frame = page.next(timeout: max(0, end.timeIntervalSinceNow)) {
            guard frame.opcode == 1, let object = try? JSONSerialization.jsonObject(with: Data(frame.payload)) as? [String: Any],
                  object["event"] as? String == "meters" else { continue }
            found.append(object)
        }
        return found
    }

    static func layerNames(_ message: [String: Any]) -> [String] {
        (message["layers"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
    }

    @Test("a page gets every layer first, then only changes, and every layer again within a second; a page that comes gets every layer at once")
    func changesOnly() throws {
        let show = try OfflineShow(Self.session, audio: [("tone.wav", Signals.constant(0.25, frames: 4800))])
        let server = WebControlServer(options: .init(host: "127.0.0.1", port: 0, metersPerSecond: 25))
        try server.start()
        defer { server.stop() }
        server.attach(SessionWebShow(dispatcher: ControlDispatcher(player: show.player)))
        let page = try WebSocketTestClient(port: try #require(server.port))
        // The show is stopped: no meter changes.
        let seen = Self.meters(page, for: 2.5)
        try #require(seen.count >= 10, "\(seen.count) meters messages in 2.5 s")
        #expect(seen[0]["complete"] as? Bool == true && Self.layerNames(seen[0]) == ["a", "b", "c"], "\(seen[0])")
        let partial = seen.dropFirst().filter { $0["complete"] as? Bool == false }
        let whole = seen.dropFirst().filter { $0["complete"] as? Bool == true }
        #expect(partial.count >= 6 && partial.allSatisfy { Self.layerNames($0).isEmpty }, "\(partial.prefix(3))")
        #expect((1...3).contains(whole.count) && whole.allSatisfy { Self.layerNames($0) == ["a", "b", "c"] }, "\(whole.count) complete")
        // A second page: its first meters hold every layer, whatever the first page was sent.
        let other = try WebSocketTestClient(port: try #require(server.port))
        let first = try #require(Self.meters(other, for: 0.3).first)
        #expect(first["complete"] as? Bool == true && Self.layerNames(first) == ["a", "b", "c"], "\(first)")
    }

    @Test("keepChanges keeps the layers whose meter differs, in order")
    func keepChanges() throws {
        let show = try OfflineShow(Self.session, audio: [("tone.wav", Signals.constant(0.25, frames: 4800))])
        let meters = SessionWebShow(dispatcher: ControlDispatcher(player: show.player)).meters()
        var previous = meters.layers
        previous[1].peakDB = -12
        previous[2].clip = true
        var changed = meters
        changed.keepChanges(since: previous)
        #expect(changed.layers.map(\.name) == ["b", "c"] && !changed.complete)
        var same = meters
        same.keepChanges(since: meters.layers)
        #expect(same.layers.isEmpty && !same.complete)
        var first = meters
        first.keepChanges(since: nil)
        #expect(first.layers.map(\.name) == ["a", "b", "c"] && first.complete)
        var fewer = meters
        fewer.keepChanges(since: Array(previous.prefix(2)))
        #expect(fewer.layers.count == 3 && fewer.complete)
    }
}
