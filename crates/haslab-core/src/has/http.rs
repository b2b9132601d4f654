//! HTTP/1.1 over the simulated byte stream, at the level of message sizes.
//!
//! A request is `GET /<segment URL> HTTP/1.1` with its headers: [`REQUEST_BYTES`] on the wire.
//! A response is a header of [`RESPONSE_HEADER_BYTES`] followed by the segment's bytes. The
//! byte stream carries no content; the message's identity travels as its write tag (what the
//! URL would say): [`tag`] packs the segment index and the level, so the server learns what was
//! asked for exactly as it would from the URL, without looking into the client.
//!
//! Sizes: a browser's segment GET with Host, User-Agent, Accept, Accept-Encoding, Connection
//! and Range/Referer headers is typically 250–400 bytes; a response header (status line, Date,
//! Server, Content-Type, Content-Length, Last-Modified, ETag, Connection) 200–350 bytes. The
//! header and the body form one byte stream, so a response's last segment carries
//! (header + body) mod MSS bytes. Live mode's player and origin send the same sizes, the head
//! written with the body's first bytes (`python/haslab/live/wire.py`).

use super::video::Video;
use crate::app::AppApi;
use crate::tcp::cc::AppData;

/// Bytes of a segment request on the wire (request line and headers).
pub const REQUEST_BYTES: u64 = 300;
/// Bytes of a response's status line and headers.
pub const RESPONSE_HEADER_BYTES: u64 = 300;
/// The server's port (HTTP).
pub const HTTP_PORT: u16 = 80;

/// The tag of the request for `segment` at `level` (and of its response).
pub fn tag(segment: usize, level: usize) -> u64 {
    ((segment as u64) << 8) | level as u64
}

/// (segment, level) of a tag.
pub fn untag(tag: u64) -> (usize, usize) {
    ((tag >> 8) as usize, (tag & 0xff) as usize)
}

/// The server side of a player's connections: answers each request with the segment's bytes
/// and, before its first response on a connection, passes the video's encoding ladder down to
/// the connection's congestion control (TcpHas and Trickle read it; others ignore it).
#[derive(Debug, Default)]
pub struct HttpServer {
    /// connections that already got the ladder
    informed: Vec<u32>,
    pub requests_served: u64,
    pub body_bytes_sent: u64,
}

impl HttpServer {
    /// A whole request `tag` arrived on connection `conn`.
    pub fn on_request(&mut self, api: &mut AppApi, video: &Video, conn: u32, tag: u64) {
        let (segment, level) = untag(tag);
        if segment >= video.segments() || level >= video.levels() {
            return; // a real server would answer 404; the simulated client never asks
        }
        if !self.informed.contains(&conn) {
            self.informed.push(conn);
            api.set_app_data(
                conn,
                1,
                AppData {
                    encoding_bitrates_bps: video.bitrates_bps.clone(),
                },
            );
        }
        let body = video.size(level, segment);
        self.requests_served += 1;
        self.body_bytes_sent += body;
        api.write(conn, 1, RESPONSE_HEADER_BYTES + body, tag);
    }

    /// The client closed connection `conn`: close our side too.
    pub fn on_peer_closed(&mut self, api: &mut AppApi, conn: u32) {
        self.informed.retain(|&c| c != conn);
        api.close(conn, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::app::AppAction;

    #[test]
    fn the_server_passes_the_ladder_down_once_per_connection_before_its_first_response() {
        let video = Video::cbr(
            "t",
            vec![1_000_000, 2_000_000],
            2_000_000_000,
            10_000_000_000,
        )
        .unwrap();
        let mut server = HttpServer::default();
        let mut actions = Vec::new();
        let mut api = AppApi::new(0, &mut actions);
        server.on_request(&mut api, &video, 7, tag(0, 1));
        server.on_request(&mut api, &video, 7, tag(1, 0));
        server.on_request(&mut api, &video, 8, tag(2, 0));
        let ladder = AppData {
            encoding_bitrates_bps: vec![1_000_000, 2_000_000],
        };
        assert_eq!(
            actions,
            vec![
                AppAction::SetAppData {
                    conn: 7,
                    side: 1,
                    data: ladder.clone()
                },
                AppAction::Write {
                    conn: 7,
                    side: 1,
                    bytes: RESPONSE_HEADER_BYTES + 500_000,
                    tag: tag(0, 1)
                },
                AppAction::Write {
                    conn: 7,
                    side: 1,
                    bytes: RESPONSE_HEADER_BYTES + 250_000,
                    tag: tag(1, 0)
                },
                AppAction::SetAppData {
                    conn: 8,
                    side: 1,
                    data: ladder
                },
                AppAction::Write {
                    conn: 8,
                    side: 1,
                    bytes: RESPONSE_HEADER_BYTES + 250_000,
                    tag: tag(2, 0)
                },
            ]
        );
    }

    #[test]
    fn tags_round_trip() {
        assert_eq!(untag(tag(123_456, 7)), (123_456, 7));
        assert_eq!(untag(tag(0, 255)), (0, 255));
    }
}
