package dev.edgelm.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The question gate's scoring on hand-written replies. */
class QuestionsTest {

    @Test
    void defaultsAreEightAndHandWrittenAnswersScore() {
        List<Questions.Question> qs = Questions.defaults();
        assertEquals(8, qs.size());
        String[] right = {"Paris.", "17 + 25 = 42", "There are 100 centimetres.", "Blue", "72", "H2O", "120 minutes", "Earth"};
        String[] wrong = {"Lyon", "43", "1000", "grey", "81", "CO2", "60", "Mars"};
        for (int i = 0; i < 8; i++) {
            assertEquals(true, Questions.matches(qs.get(i), right[i]), right[i]);
            assertEquals(false, Questions.matches(qs.get(i), wrong[i]), wrong[i]);
        }
    }

    @Test
    void compositeReplyIsSplitByNumber() {
        List<Questions.Question> qs = Questions.defaults();
        String reply = "Sure!\n1. Paris\n2) 42\n**3.** 100 cm\n5: 81\n4. blue\n6. H2O\n7. 120\n";
        List<Questions.Answer> a = Questions.scoreComposite(qs, reply);
        assertEquals(List.of(true, true, true, true, false, true, true, false), a.stream().map(Questions.Answer::correct).toList());
        assertEquals("", a.get(7).answer()); // no line 8
    }
}
