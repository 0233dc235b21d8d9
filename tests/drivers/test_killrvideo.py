"""A KillrVideo-style application end to end through the DataStax Python
driver (issue 12, must-show 3): users registered with INSERT ... IF NOT
EXISTS, videos with a user-defined type column, comments by video and by
user written together in logged batches, videos found through secondary
indexes (by uploader, by tag) and by user through a materialized view
(issue 31, must-show 2), view and rating counters, paging through a
video's comments, and a video row exported as JSON. Prepared statements
throughout, as the application does."""
import json
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from cassandra.query import BatchStatement, SimpleStatement
from cassandra.util import uuid_from_time

from conftest import connect, own_server

SCHEMA = [
    "CREATE KEYSPACE killrvideo WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    "CREATE TYPE killrvideo.video_metadata (height int, width int, video_bit_rate set<text>, encoding text)",
    "CREATE TABLE killrvideo.users (userid uuid PRIMARY KEY, firstname text, lastname text, email text, "
    "created_date timestamp)",
    "CREATE TABLE killrvideo.user_credentials (email text PRIMARY KEY, password text, userid uuid)",
    "CREATE TABLE killrvideo.videos (videoid uuid PRIMARY KEY, userid uuid, name text, description text, "
    "location text, location_type int, preview_thumbnails map<text, text>, tags set<text>, "
    "metadata set<frozen<video_metadata>>, added_date timestamp)",
    "CREATE INDEX videos_by_uploader ON killrvideo.videos (userid)",
    "CREATE INDEX videos_by_tag ON killrvideo.videos (tags)",
    # The application's own query table made by the database: a user's videos, newest first.
    "CREATE MATERIALIZED VIEW killrvideo.videos_by_user AS SELECT userid, added_date, videoid, name FROM "
    "killrvideo.videos WHERE userid IS NOT NULL AND videoid IS NOT NULL PRIMARY KEY (userid, videoid)",
    "CREATE TABLE killrvideo.user_videos (userid uuid, added_date timestamp, videoid uuid, name text, "
    "PRIMARY KEY (userid, added_date, videoid)) WITH CLUSTERING ORDER BY (added_date DESC, videoid ASC)",
    "CREATE TABLE killrvideo.comments_by_video (videoid uuid, commentid timeuuid, userid uuid, comment text, "
    "PRIMARY KEY (videoid, commentid)) WITH CLUSTERING ORDER BY (commentid DESC)",
    "CREATE TABLE killrvideo.comments_by_user (userid uuid, commentid timeuuid, videoid uuid, comment text, "
    "PRIMARY KEY (userid, commentid)) WITH CLUSTERING ORDER BY (commentid DESC)",
    "CREATE TABLE killrvideo.video_playback_stats (videoid uuid PRIMARY KEY, views counter)",
    "CREATE TABLE killrvideo.video_ratings (videoid uuid PRIMARY KEY, rating_counter counter, rating_total counter)",
]

TAGS = ["cassandra", "tablets", "cooking", "music"]


class VideoMetadata:
    def __init__(self, height=None, width=None, video_bit_rate=None, encoding=None):
        self.height, self.width, self.video_bit_rate, self.encoding = height, width, video_bit_rate, encoding


@pytest.fixture(scope="module")
def app():
    server_run = own_server()
    server = next(server_run)
    cluster, session = connect(server)
    for stmt in SCHEMA:
        session.execute(stmt)
    cluster.register_user_type("killrvideo", "video_metadata", VideoMetadata)
    session.set_keyspace("killrvideo")
    yield session
    cluster.shutdown()
    server_run.close()  # stops the server, removes its directory


def register(session, email, first, last):
    """KillrVideo's user registration: credentials claimed with IF NOT EXISTS, then the profile."""
    userid = uuid.uuid4()
    claim = session.prepare("INSERT INTO user_credentials (email, password, userid) VALUES (?, ?, ?) IF NOT EXISTS")
    result = session.execute(claim, (email, "hash-" + first, userid)).one()
    if not result.applied:
        return None, result
    profile = session.prepare("INSERT INTO users (userid, firstname, lastname, email, created_date) "
                              "VALUES (?, ?, ?, ?, toTimestamp(now()))")
    session.execute(profile, (userid, first, last, email))
    return userid, result


def test_killrvideo_end_to_end(app):
    s = app
    # --- users: each email can be claimed once ---
    users = {}
    for i, (first, last) in enumerate([("Ada", "Lovelace"), ("Alan", "Turing"), ("Grace", "Hopper"),
                                       ("Edsger", "Dijkstra")]):
        userid, result = register(s, f"{first.lower()}@example.com", first, last)
        assert userid is not None and result.applied
        users[first] = userid
    again, refused = register(s, "ada@example.com", "Someone", "Else")
    assert again is None and not refused.applied
    assert refused.userid == users["Ada"]  # the [applied] row carries the current values, as Cassandra's
    assert s.execute("SELECT count(*) FROM users").one().count == 4

    # --- videos: the row, the uploader's list, in one logged batch ---
    add_video = s.prepare("INSERT INTO videos (videoid, userid, name, description, location, location_type, "
                          "preview_thumbnails, tags, metadata, added_date) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?)")
    add_user_video = s.prepare("INSERT INTO user_videos (userid, added_date, videoid, name) VALUES (?, ?, ?, ?)")
    start = datetime(2026, 11, 1, tzinfo=timezone.utc)
    videos = {}
    for u, (first, userid) in enumerate(users.items()):
        for n in range(3):
            videoid = uuid.uuid4()
            added = start + timedelta(hours=10 * u + n)
            tags = {TAGS[(u + n) % len(TAGS)], TAGS[(u + 2 * n + 1) % len(TAGS)]}
            meta = {VideoMetadata(720 * (n + 1), 1280 * (n + 1), {"3000", "1500"}, "h264")}
            batch = BatchStatement()
            batch.add(add_video, (videoid, userid, f"{first} #{n}", f"talk {n} by {first}", f"https://v/{videoid}",
                                  {"small": f"https://t/{videoid}/s"}, tags, meta, added))
            batch.add(add_user_video, (userid, added, videoid, f"{first} #{n}"))
            s.execute(batch)
            videos[videoid] = {"user": userid, "tags": tags, "added": added, "n": n, "first": first}

    # By uploader through the secondary index == the denormalized table.
    by_uploader = s.prepare("SELECT videoid, name FROM videos WHERE userid = ?")
    latest_by_user = s.prepare("SELECT videoid, added_date FROM user_videos WHERE userid = ?")
    for first, userid in users.items():
        indexed = {r.videoid for r in s.execute(by_uploader, (userid,))}
        listed = list(s.execute(latest_by_user, (userid,)))
        assert indexed == {r.videoid for r in listed} and len(indexed) == 3
        assert [r.added_date for r in listed] == sorted((r.added_date for r in listed), reverse=True)
    # By user through the materialized view: the same videos, with their names, no batch needed.
    through_view = s.prepare("SELECT videoid, name, added_date FROM videos_by_user WHERE userid = ?")
    for first, userid in users.items():
        viewed = {r.videoid: (r.name, r.added_date) for r in s.execute(through_view, (userid,))}
        assert set(viewed) == {v for v, meta in videos.items() if meta["user"] == userid}
        for videoid, (name, added) in viewed.items():
            meta = videos[videoid]
            assert name == f"{first} #{meta['n']}" and added == meta["added"].replace(tzinfo=None)

    # By tag through the collection index, paged.
    by_tag = s.prepare("SELECT videoid, tags FROM videos WHERE tags CONTAINS ?")
    by_tag.fetch_size = 2
    for tag in TAGS:
        got = [r.videoid for r in s.execute(by_tag, (tag,))]
        assert sorted(got) == sorted(v for v, meta in videos.items() if tag in meta["tags"])
        assert len(got) == len(set(got))

    # --- comments: by video and by user, together ---
    comment_by_video = s.prepare("INSERT INTO comments_by_video (videoid, commentid, userid, comment) VALUES (?, ?, ?, ?)")
    comment_by_user = s.prepare("INSERT INTO comments_by_user (userid, commentid, videoid, comment) VALUES (?, ?, ?, ?)")
    target = next(v for v, meta in videos.items() if meta["first"] == "Ada" and meta["n"] == 0)
    written = []
    for k in range(25):
        author = list(users.values())[k % 4]
        commentid = uuid_from_time(start + timedelta(minutes=k))
        batch = BatchStatement()
        batch.add(comment_by_video, (target, commentid, author, f"comment {k}"))
        batch.add(comment_by_user, (author, commentid, target, f"comment {k}"))
        s.execute(batch)
        written.append((commentid, author))
    page = SimpleStatement("SELECT commentid, comment FROM comments_by_video WHERE videoid = %s", fetch_size=10)
    comments = list(s.execute(page, (target,)))
    assert [r.comment for r in comments] == [f"comment {k}" for k in reversed(range(25))]  # newest first, 3 pages
    grace = s.execute("SELECT comment FROM comments_by_user WHERE userid = %s", (users["Grace"],)).all()
    assert [r.comment for r in grace] == [f"comment {k}" for k in reversed(range(25)) if k % 4 == 2]

    # --- views and ratings: counters ---
    view = s.prepare("UPDATE video_playback_stats SET views = views + 1 WHERE videoid = ?")
    rate = s.prepare("UPDATE video_ratings SET rating_counter = rating_counter + 1, "
                     "rating_total = rating_total + ? WHERE videoid = ?")
    for k in range(37):
        s.execute(view, (target,))
    for stars in (5, 4, 3, 5):
        s.execute(rate, (stars, target))
    assert s.execute("SELECT views FROM video_playback_stats WHERE videoid = %s", (target,)).one().views == 37
    rating = s.execute("SELECT rating_counter, rating_total FROM video_ratings WHERE videoid = %s", (target,)).one()
    assert (rating.rating_counter, rating.rating_total) == (4, 17)

    # --- JSON export of a video row, UDT included ---
    exported = json.loads(s.execute("SELECT JSON * FROM videos WHERE videoid = %s", (target,)).one()[0])
    assert exported["videoid"] == str(target)
    assert exported["userid"] == str(users["Ada"])
    assert exported["name"] == "Ada #0" and exported["location_type"] == 1
    assert sorted(exported["tags"]) == sorted(videos[target]["tags"])
    (exported_meta,) = exported["metadata"]
    assert sorted(exported_meta.pop("video_bit_rate")) == ["1500", "3000"]
    assert exported_meta == {"height": 720, "width": 1280, "encoding": "h264"}
    assert exported["preview_thumbnails"] == {"small": f"https://t/{target}/s"}
    row = s.execute("SELECT metadata FROM videos WHERE videoid = %s", (target,)).one()
    (meta,) = row.metadata
    assert (meta.height, meta.width, meta.encoding) == (720, 1280, "h264")

    # --- a video taken down leaves the indexes ---
    s.execute("DELETE FROM videos WHERE videoid = %s", (target,))
    assert target not in {r.videoid for r in s.execute(by_uploader, (users["Ada"],))}
    assert target not in {r.videoid for r in s.execute(through_view, (users["Ada"],))}
    # A video handed to another user moves between the users' view partitions.
    moved = next(v for v, meta in videos.items() if meta["first"] == "Ada" and meta["n"] == 1)
    s.execute("UPDATE videos SET userid = %s WHERE videoid = %s", (users["Alan"], moved))
    assert moved not in {r.videoid for r in s.execute(through_view, (users["Ada"],))}
    assert moved in {r.videoid for r in s.execute(through_view, (users["Alan"],))}
    for tag in videos[target]["tags"]:
        assert target not in {r.videoid for r in s.execute(by_tag, (tag,))}
    retagged = next(v for v, meta in videos.items() if meta["first"] == "Alan")
    s.execute("UPDATE videos SET tags = tags + {'retro'} WHERE videoid = %s", (retagged,))
    assert [r.videoid for r in s.execute(by_tag, ("retro",))] == [retagged]
