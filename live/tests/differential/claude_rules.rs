//! Claude Code cases of the reader's rules per version (issue 27: `handoff_claude::ReadRules`),
//! each measured at both ends of the verified range (2.1.197 and 2.1.332).

use handoff_live::differential::Mutation;
use serde_json::{json, Value};

use super::{records, to_bytes};

/// A uuid no record of the genuine sessions has.
const LOST_PARENT: &str = "00000000-0000-4000-8000-00000000dead";

/// The indexes of the message records (user and assistant).
fn messages(r: &[Value]) -> Vec<usize> {
    (0..r.len()).filter(|&i| super::is_message(&r[i])).collect()
}

/// The second prompt's parent lost, and a `system` `file_snapshot` record (a root, as 2.1.332's
/// plan snapshot writes one) written 75 ms before that prompt: Claude Code goes on by time from
/// the prompt; 2.1.197 to the snapshot (the first turn is not sent), 2.1.332 passes over it to
/// the first answer, 3.7 s before (the whole conversation is sent).
pub(super) const BY_TIME_SKIPS_FILE_SNAPSHOT: Mutation = Mutation {
    name: "by-time-skips-file-snapshot",
    apply: |b| {
        let mut r = records(b);
        let user2 = messages(&r)[2];
        r[user2]["parentUuid"] = json!(LOST_PARENT);
        let at = handoff_sdk::Timestamp::parse(r[user2]["timestamp"].as_str().unwrap()).unwrap();
        let mut snapshot = json!({"parentUuid": null, "isSidechain": false, "type": "system",
            "subtype": "file_snapshot", "content": "File snapshot", "level": "info",
            "isMeta": true, "uuid": "11111111-2222-4333-8444-555555555555",
            "userType": "external",
            "timestamp": handoff_sdk::Timestamp::from_millis(at.millis() - 75).to_rfc3339()});
        snapshot["cwd"] = r[user2]["cwd"].clone();
        snapshot["sessionId"] = r[user2]["sessionId"].clone();
        r.insert(user2, snapshot);
        to_bytes(&r)
    },
};

/// `child` message record's parent made the `parent` message record (indexes among messages).
fn name_as_parent(b: &[u8], pairs: &[(usize, usize)], without_last_prompt: bool) -> Vec<u8> {
    let mut r = records(b);
    let at = messages(&r);
    for &(child, parent) in pairs {
        r[at[child]]["parentUuid"] = r[at[parent]]["uuid"].clone();
    }
    if without_last_prompt {
        r.retain(|x| x["type"] != "last-prompt");
    }
    to_bytes(&r)
}

/// A loop: the second prompt names itself as its parent. Claude Code (both ends) takes a parent
/// already on the conversation for one it does not find and goes on by time: to the first
/// answer, 3.7 s before; the whole conversation is sent.
pub(super) const LOOP_SELF: Mutation = Mutation {
    name: "loop-self",
    apply: |b| name_as_parent(b, &[(2, 2)], false),
};

/// A loop of two: the second prompt and its answer name each other. Claude Code resumes the
/// answer the `last-prompt` names (it has a child, on the loop), and goes on by time from the
/// prompt: the whole conversation.
pub(super) const LOOP_PAIR: Mutation = Mutation {
    name: "loop-pair",
    apply: |b| name_as_parent(b, &[(2, 3)], false),
};

/// A loop of the whole conversation: the first prompt names the last answer, and no
/// `last-prompt`: no record is without a child; Claude Code resumes the last one written and,
/// at the first prompt, finds nothing written before it: the whole conversation.
pub(super) const LOOP_ROUND: Mutation = Mutation {
    name: "loop-round-no-last-prompt",
    apply: |b| name_as_parent(b, &[(0, 3)], true),
};

/// The first answer's `message` a string: Claude Code 2.1.197 fails ("e.message is not an
/// Object"), 2.1.332 passes over the record, its link holding: the two prompts are sent
/// together, then the last answer.
pub(super) const MESSAGE_NOT_AN_OBJECT: Mutation = Mutation {
    name: "message-not-an-object",
    apply: |b| {
        let mut r = records(b);
        let answer = messages(&r)[1];
        r[answer]["message"] = json!("error");
        to_bytes(&r)
    },
};

/// The tool result's `message.content` a number: 2.1.197 fails, 2.1.332 passes over the record,
/// and drops the call it leaves unanswered (the conversation goes on after it).
pub(super) const RESULT_CONTENT_A_NUMBER: Mutation = Mutation {
    name: "result-content-a-number",
    apply: |b| {
        let mut r = records(b);
        let result = messages(&r)[2];
        assert!(r[result]["toolUseResult"].is_object(), "the tool result");
        r[result]["message"]["content"] = json!(42);
        to_bytes(&r)
    },
};

/// A `system` record of subtype `local_command` as Claude Code writes one (`cw` in its bundle:
/// `content`, `level: "info"`, `isMeta: false`), on the conversation's chain after `parent`.
fn local_command(parent: &Value, uuid: &str, content: &str, at_millis: i64) -> Value {
    json!({"parentUuid": parent["uuid"], "isSidechain": false, "userType": "external",
        "cwd": parent["cwd"], "sessionId": parent["sessionId"], "version": "2.1.197",
        "type": "system", "subtype": "local_command", "content": content, "level": "info",
        "timestamp": handoff_sdk::Timestamp::from_millis(at_millis).to_rfc3339(),
        "uuid": uuid, "isMeta": false})
}

/// The millisecond of a record's `timestamp`.
fn millis(r: &Value) -> i64 {
    handoff_sdk::Timestamp::parse(r["timestamp"].as_str().unwrap())
        .unwrap()
        .millis()
}

const MODEL_COMMAND: &str = "<command-name>/model</command-name>\n            \
                             <command-message>model</command-message>\n            \
                             <command-args></command-args>";
const MODEL_OUTPUT: &str = "<local-command-stdout>Kept model as Opus</local-command-stdout>";

/// A local command between the turns (`/model`, as Claude Code writes it: the command, then its
/// output, two `system` `local_command` records), the second prompt hanging on its output. Both
/// ends send each record's `content` as is as a user text, merged with the user message before
/// it (`normalizeMessagesForAPI`): here the second prompt's message.
pub(super) const LOCAL_COMMAND: Mutation = Mutation {
    name: "local-command",
    apply: |b| {
        let mut r = records(b);
        let at = messages(&r);
        let (answer, prompt) = (at[1], at[2]);
        let t = millis(&r[answer]);
        let command = local_command(
            &r[answer],
            "5c0c0c0c-0000-4000-8000-00000000c001",
            MODEL_COMMAND,
            t + 1000,
        );
        let output = local_command(
            &command,
            "5c0c0c0c-0000-4000-8000-00000000c002",
            MODEL_OUTPUT,
            t + 1001,
        );
        r[prompt]["parentUuid"] = output["uuid"].clone();
        r.insert(prompt, output);
        r.insert(prompt, command);
        to_bytes(&r)
    },
};

/// The same local command after the last answer, ending the session (as `/exit` ends many real
/// sessions): the history ends on a user message of the two texts.
pub(super) const LOCAL_COMMAND_AT_END: Mutation = Mutation {
    name: "local-command-at-end",
    apply: |b| {
        let mut r = records(b);
        let last = *messages(&r).last().unwrap();
        let t = millis(&r[last]);
        let command = local_command(
            &r[last],
            "5c0c0c0c-0000-4000-8000-00000000c003",
            MODEL_COMMAND,
            t + 1000,
        );
        let output = local_command(
            &command,
            "5c0c0c0c-0000-4000-8000-00000000c004",
            MODEL_OUTPUT,
            t + 1001,
        );
        r.push(command);
        r.push(output);
        to_bytes(&r)
    },
};

/// The tool call's `input` member removed (a `tool_use` block without `input`).
pub(super) const TOOL_USE_WITHOUT_INPUT: Mutation = Mutation {
    name: "tool-use-without-input",
    apply: |b| {
        let mut r = records(b);
        let mut removed = 0;
        for x in &mut r {
            let Some(content) = x["message"]["content"].as_array_mut() else {
                continue;
            };
            for block in content {
                if block["type"] == "tool_use" {
                    block.as_object_mut().unwrap().remove("input");
                    removed += 1;
                }
            }
        }
        assert_eq!(removed, 1, "the sample's one call");
        to_bytes(&r)
    },
};

/// The first answer and the second prompt without a `timestamp`.
pub(super) const WITHOUT_TIMESTAMP: Mutation = Mutation {
    name: "records-without-timestamp",
    apply: |b| {
        let mut r = records(b);
        let at = messages(&r);
        for i in [at[1], at[2]] {
            r[i].as_object_mut().unwrap().remove("timestamp");
        }
        to_bytes(&r)
    },
};

/// A content block of a type no API version names, after the first answer's text.
pub(super) const UNKNOWN_BLOCK_TYPE: Mutation = Mutation {
    name: "unknown-block-type",
    apply: |b| {
        let mut r = records(b);
        let answer = messages(&r)[1];
        r[answer]["message"]["content"]
            .as_array_mut()
            .unwrap()
            .push(json!({"type": "x_future_block", "data": "kept as is"}));
        to_bytes(&r)
    },
};

/// A `document` block (a kind the API takes in a user message, which the transcript has no form
/// for) before the second prompt's text.
pub(super) const DOCUMENT_BLOCK: Mutation = Mutation {
    name: "document-block",
    apply: |b| {
        let mut r = records(b);
        let prompt = messages(&r)[2];
        let text = r[prompt]["message"]["content"].clone();
        r[prompt]["message"]["content"] = json!([
            {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                "data": "notes"}},
            {"type": "text", "text": text}]);
        to_bytes(&r)
    },
};

/// The second prompt's content an empty array.
pub(super) const EMPTY_USER_CONTENT: Mutation = Mutation {
    name: "empty-user-content",
    apply: |b| {
        let mut r = records(b);
        let prompt = messages(&r)[2];
        r[prompt]["message"]["content"] = json!([]);
        to_bytes(&r)
    },
};

/// A bare string among the second prompt's blocks (before its text).
pub(super) const BARE_STRING_BLOCK: Mutation = Mutation {
    name: "bare-string-block",
    apply: |b| {
        let mut r = records(b);
        let prompt = messages(&r)[2];
        let text = r[prompt]["message"]["content"].clone();
        r[prompt]["message"]["content"] = json!(["a bare string", {"type": "text", "text": text}]);
        to_bytes(&r)
    },
};

/// A user record with no parent and `content` written last, its timestamp the last answer's,
/// and no `last-prompt` naming a leaf (as claude-code-log's hand-made last record).
fn root_prompt_at_end(b: &[u8], content: Value) -> Vec<u8> {
    let mut r = records(b);
    r.retain(|x| x["type"] != "last-prompt");
    let at = messages(&r);
    let mut prompt = r[at[0]].clone();
    prompt["parentUuid"] = Value::Null;
    prompt["uuid"] = json!("22222222-3333-4444-8555-666666666666");
    prompt["timestamp"] = r[*at.last().unwrap()]["timestamp"].clone();
    prompt["message"]["content"] = content;
    r.push(prompt);
    to_bytes(&r)
}

/// A root prompt of one bare string written last: 2.1.332 leaves the string out and resumes the
/// conversation before it (the record is no leaf); 2.1.197 resumes from the prompt, the string
/// sent as it is (the provider refuses it).
pub(super) const BARE_STRING_ROOT_PROMPT_AT_END: Mutation = Mutation {
    name: "bare-string-root-prompt-at-end",
    apply: |b| root_prompt_at_end(b, json!(["wow error"])),
};
