//! OpenCode 1.18.33: a session is rows of one SQLite database. The genuine sample is a SQL dump
//! of the database the real CLI wrote (text: the recorded folder is replaced in it like in the
//! other samples, and a mutation is SQL run on it); the case materialises it as
//! `<store>/opencode.db` beside the session's handle (`handoff-sessions/<id>.json`, what the
//! plugin's `read_path` reads), and OpenCode resumes the session by id from that database.
//!
//! OpenCode sends (`MessageV2.toModelMessages` over `filterCompacted`): messages in time order,
//! a reverted tail deleted before the new prompt, failed assistant turns left out, a tool call
//! still pending or running as the error "[Tool execution was interrupted]".

use std::path::PathBuf;

use handoff_live::differential::{Case, Mutation, SideFile};

use super::{check, sample, Expect, RECORDED_CWD};

const OPENCODE_TOOL: &str = "opencode/ses_dca8eb152ffee0Ft97U5ceGAFI.sql";
const OPENCODE_TOOL_ID: &str = "ses_dca8eb152ffee0Ft97U5ceGAFI";

/// The session's handle, relative to the store root: the file a case reads.
fn handle_place(_cwd: &str) -> PathBuf {
    PathBuf::from(format!("handoff-sessions/{OPENCODE_TOOL_ID}.json"))
}

/// The handle of a session handoff did not make: no marker.
fn handle_bytes() -> Vec<u8> {
    format!("{{\"x-handoff\": null, \"session\": \"{OPENCODE_TOOL_ID}\", \"database\": \"opencode.db\"}}\n")
        .into_bytes()
}

/// The database of `dump` (the recorded folder replaced by `cwd`) with `sql` run on it.
fn database(dump: &[u8], cwd: &str, sql: &str) -> Vec<u8> {
    let text = String::from_utf8(dump.to_vec())
        .expect("the dump is UTF-8")
        .replace(RECORDED_CWD, cwd)
        .replace(&RECORDED_CWD[1..], &cwd[1..]);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("opencode.db");
    let connection = rusqlite::Connection::open(&path).expect("a new database");
    connection.execute_batch(&text).expect("the dump loads");
    connection.execute_batch(sql).expect("the mutation applies");
    connection
        .pragma_update(None, "journal_mode", "WAL")
        .expect("WAL, as OpenCode keeps it");
    drop(connection);
    std::fs::read(&path).expect("the database reads")
}

/// The handle unchanged: the mutations are the database's.
const HANDLE: Mutation = Mutation {
    name: "genuine",
    apply: <[u8]>::to_vec,
};

/// The files a case puts beside the handle (the database, with its mutation applied).
type DatabaseOf = Box<dyn Fn(&str) -> Vec<SideFile>>;

/// A named SQL change of the recorded database.
struct SqlMutation {
    name: &'static str,
    sql: &'static str,
    expect: Expect,
}

/// The last turn reverted (`session.revert` naming the second user message, as OpenCode's
/// undo writes it): OpenCode deletes it before the prompt.
const REVERT_SECOND_TURN: &str = "UPDATE session SET revert = json_object('messageID', \
     (SELECT id FROM message WHERE json_extract(data, '$.role') = 'user' ORDER BY time_created DESC LIMIT 1))";

/// The last answer failed (an API error recorded on it): OpenCode leaves it out.
const LAST_ANSWER_FAILED: &str = "UPDATE message SET data = json_set(data, '$.error', \
     json_object('name', 'APIError', 'data', json_object('message', 'boom', 'isRetryable', json('false')))) \
     WHERE id = (SELECT id FROM message ORDER BY time_created DESC, id DESC LIMIT 1)";

/// The last call of the second turn left running (OpenCode killed while the tool ran).
const CALL_LEFT_RUNNING: &str = "UPDATE part SET data = json_set(data, '$.state', \
     json_object('status', 'running', 'input', json_extract(data, '$.state.input'), \
     'time', json_object('start', json_extract(data, '$.state.time.start')))) \
     WHERE id = (SELECT id FROM part WHERE json_extract(data, '$.type') = 'tool' ORDER BY id DESC LIMIT 1)";

/// A compaction after the first turn, as OpenCode's `/compact` writes it: a user message with a
/// `compaction` part, then an assistant message with `summary: true` holding the summary.
const COMPACTION_AFTER_FIRST_TURN: &str = "
    INSERT INTO message (id, session_id, time_created, time_updated, data)
      SELECT 'msg_2357170000001compactUser01', session_id, time_created + 1, time_created + 1,
             json_object('role', 'user', 'time', json_object('created', time_created + 1), 'agent', 'build',
                         'model', json_object('providerID', 'fake', 'modelID', 'fake-model'))
      FROM message WHERE json_extract(data, '$.finish') = 'stop' ORDER BY time_created LIMIT 1;
    INSERT INTO part (id, message_id, session_id, time_created, time_updated, data)
      SELECT 'prt_2357170000001compactPart01', id, session_id, time_created, time_created,
             json_object('type', 'compaction', 'auto', json('false'))
      FROM message WHERE id = 'msg_2357170000001compactUser01';
    INSERT INTO message (id, session_id, time_created, time_updated, data)
      SELECT 'msg_2357170000002compactSumm01', session_id, time_created + 1, time_created + 1,
             json_object('role', 'assistant', 'parentID', id, 'summary', json('true'), 'finish', 'stop',
                         'mode', 'compaction', 'agent', 'compaction', 'modelID', 'fake-model', 'providerID', 'fake',
                         'path', json_object('cwd', '/', 'root', '/'), 'cost', 0,
                         'tokens', json_object('input', 0, 'output', 0, 'reasoning', 0, 'cache', json_object('read', 0, 'write', 0)),
                         'time', json_object('created', time_created + 1, 'completed', time_created + 1))
      FROM message WHERE id = 'msg_2357170000001compactUser01';
    INSERT INTO part (id, message_id, session_id, time_created, time_updated, data)
      SELECT 'prt_2357170000002compactText01', id, session_id, time_created, time_created,
             json_object('type', 'text', 'text', 'We ran two commands; one failed.')
      FROM message WHERE id = 'msg_2357170000002compactSumm01';";

fn mutations() -> Vec<SqlMutation> {
    vec![
        SqlMutation {
            name: "genuine",
            sql: "",
            expect: Expect::Agree,
        },
        SqlMutation {
            name: "revert-second-turn",
            sql: REVERT_SECOND_TURN,
            expect: Expect::Agree,
        },
        SqlMutation {
            name: "last-answer-failed",
            sql: LAST_ANSWER_FAILED,
            expect: Expect::Agree,
        },
        SqlMutation {
            name: "call-left-running",
            sql: CALL_LEFT_RUNNING,
            expect: Expect::Agree,
        },
        SqlMutation {
            name: "compaction-after-first-turn",
            sql: COMPACTION_AFTER_FIRST_TURN,
            expect: Expect::Agree,
        },
    ]
}

#[test]
fn opencode_reader_agrees_with_opencode() {
    let dump = sample(OPENCODE_TOOL);
    let handle = handle_bytes();
    let mutations = mutations();
    let side_files: Vec<DatabaseOf> = mutations
        .iter()
        .map(|m| {
            let (dump, sql) = (dump.clone(), m.sql);
            Box::new(move |cwd: &str| {
                vec![(PathBuf::from("opencode.db"), database(&dump, cwd, sql))]
            }) as DatabaseOf
        })
        .collect();
    let cases = mutations
        .iter()
        .zip(&side_files)
        .map(|(m, side)| {
            (
                Case {
                    name: format!("opencode/tool-calls/{}", m.name),
                    target: "opencode",
                    id: OPENCODE_TOOL_ID,
                    genuine: &handle,
                    recorded_cwd: RECORDED_CWD,
                    place: &handle_place,
                    side_files: side.as_ref(),
                    mutation: HANDLE,
                },
                m.expect,
            )
        })
        .collect();
    check(&handoff_opencode::OpencodePlugin, cases);
}
